/* session_record.c - a session's journal records (docs/formats.md, "Journal"): the
 * header and one record per probe run, written as they happen and read back to resume a
 * session or to warm-start a new one from an old one. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "nccltune_config.h"
#include "session/session_priv.h"

/* Add item under key, deleting it if that fails. */
static bool add(cJSON *o, const char *key, cJSON *item)
{
	if (!item)
		return false;
	if (!cJSON_AddItemToObject(o, key, item)) {
		cJSON_Delete(item);
		return false;
	}
	return true;
}

static cJSON *space_json_object(const space *sp)
{
	char *text = space_to_json(sp);
	cJSON *o = text ? cJSON_Parse(text) : NULL;

	free(text);
	return o;
}

/* The probe's capability words, in the protocol's order. */
static cJSON *caps_json(unsigned caps)
{
	cJSON *a = cJSON_CreateArray();

	for (unsigned bit = 1; a && bit && bit <= caps; bit <<= 1) {
		const char *w = (caps & bit) ? proto_capability_name(bit) : NULL;

		if (w && !cJSON_AddItemToArray(a, cJSON_CreateString(w))) {
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

cJSON *session_header_json(const nccltune_session *s)
{
	cJSON *h = cJSON_CreateObject(), *argv;
	cJSON *wl = workload_to_json(&s->cfg.wl);

	if (!h || !wl)
		goto fail;
	/* The workload object stays in the workload file format; the probe's timing options
	 * ride next to it. */
	cJSON_DeleteItemFromObjectCaseSensitive(wl, "iters");
	cJSON_DeleteItemFromObjectCaseSensitive(wl, "warmup");
	if (!cJSON_AddStringToObject(h, "schema", s->run.two_level ? SESSION_JOURNAL_SCHEMA_2
	                                                             : SESSION_JOURNAL_SCHEMA) ||
	    !cJSON_AddStringToObject(h, "type", "session") ||
	    !cJSON_AddStringToObject(h, "version", NCCLTUNE_VERSION) ||
	    !cJSON_AddStringToObject(h, "created", s->run.created) ||
	    !cJSON_AddNumberToObject(h, "seed", (double)s->cfg.seed) ||
	    !cJSON_AddStringToObject(h, "strategy", s->cfg.strategy_name) ||
	    !cJSON_AddNumberToObject(h, "budget", s->cfg.budget) ||
	    !cJSON_AddNumberToObject(h, "time_limit_s", s->cfg.time_limit_s) ||
	    !cJSON_AddNumberToObject(h, "timeout_s", s->cfg.timeout_opt_s))
		goto fail;
	argv = cJSON_AddArrayToObject(h, "probe");
	if (!argv)
		goto fail;
	for (size_t i = 0; s->run.probe_argv[i]; i++)
		if (!cJSON_AddItemToArray(argv, cJSON_CreateString(s->run.probe_argv[i])))
			goto fail;
	if (!add(h, "space", space_json_object(s->run.sp)))
		goto fail;
	if (!add(h, "workload", wl))
		goto fail_nowl;
	wl = NULL;
	if (!cJSON_AddNumberToObject(h, "iters", s->cfg.wl.iters) ||
	    !cJSON_AddNumberToObject(h, "warmup", s->cfg.wl.warmup) ||
	    !add(h, "pinned", env_pins_to_json(&s->run.pins)) ||
	    !add(h, "fingerprint", s->run.fingerprint ? cJSON_Duplicate(s->run.fingerprint, true)
	                                              : cJSON_CreateNull()) ||
	    !add(h, "warm_start", s->run.warm ? cJSON_Duplicate(s->run.warm, true)
	                                      : cJSON_CreateNull()) ||
	    !cJSON_AddBoolToObject(h, "auto_model", s->run.auto_model) ||
	    !add(h, "capabilities", caps_json(s->run.caps)) ||
	    !cJSON_AddBoolToObject(h, "two_level", s->run.two_level))
		goto fail;
	if (s->run.like[0]) {
		bool ok;

		if (!add(h, "server", session_server_json(s, &ok)))
			goto fail;
	}
	if (s->cfg.ntries > 0) {
		cJSON *tries = cJSON_AddArrayToObject(h, "tries");

		if (!tries)
			goto fail;
		for (size_t i = 0; i < s->cfg.ntries; i++) {
			cJSON *t = tryconf_to_json(&s->cfg.tries[i]);

			if (!t || !cJSON_AddItemToArray(tries, t)) {
				cJSON_Delete(t);
				goto fail;
			}
		}
	}
	return h;
fail:
	cJSON_Delete(wl);
fail_nowl:
	cJSON_Delete(h);
	return NULL;
}

/* Replace *str (cJSON-allocated) by a valid UTF-8 copy when it is not one. Returns false
 * when out of memory. */
static bool utf8_fix_string(char **str)
{
	size_t n = strlen(*str), cap = 3 * n + 1;
	char *fixed;

	fixed = cJSON_malloc(cap);
	if (!fixed)
		return false;
	if (fs_utf8_sanitize(*str, n, fixed, cap) == n && memcmp(fixed, *str, n) == 0) {
		cJSON_free(fixed);   /* already valid */
		return true;
	}
	cJSON_free(*str);
	*str = fixed;
	return true;
}

bool session_json_utf8(cJSON *item)
{
	for (; item; item = item->next) {
		if (item->string && !(item->type & cJSON_StringIsConst) &&
		    !utf8_fix_string(&item->string))
			return false;
		if (cJSON_IsString(item) && item->valuestring && !utf8_fix_string(&item->valuestring))
			return false;
		if (item->child && !session_json_utf8(item->child))
			return false;
	}
	return true;
}

/* Printable ASCII of at most max bytes of raw output, for diagnosing garbage. */
static cJSON *raw_head(const char *raw, size_t len, size_t max)
{
	char buf[512];
	size_t n = len < max ? len : max;

	if (n >= sizeof buf)
		n = sizeof buf - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = (raw[i] >= 0x20 && raw[i] < 0x7f) || raw[i] == '\n' ? raw[i] : '?';
	buf[n] = '\0';
	return cJSON_CreateString(buf);
}

/* An ablation run's "unset": the names of the dimensions it leaves unset, taken out of
 * its "env" too. Nothing for another run. False when out of memory. */
static bool add_unset(const nccltune_session *s, cJSON *j, const struct session_run *r)
{
	cJSON *names, *env = cJSON_GetObjectItemCaseSensitive(j, "env");

	if (!r->unset)
		return true;
	names = cJSON_AddArrayToObject(j, "unset");
	for (size_t d = 0; names && d < space_dims(s->run.sp); d++) {
		if (!(r->unset >> d & 1u))
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(env, space_name(s->run.sp, d));
		if (!cJSON_AddItemToArray(names, cJSON_CreateString(space_name(s->run.sp, d))))
			return false;
	}
	return names != NULL;
}

cJSON *session_run_json(const nccltune_session *s, const struct session_run *r, size_t index,
                        const char *raw_stdout, size_t raw_len)
{
	const struct outcome *o = &r->o;
	cJSON *j = cJSON_CreateObject(), *report = NULL;

	if (!j)
		return NULL;
	if (!cJSON_AddStringToObject(j, "type", "run") ||
	    !cJSON_AddNumberToObject(j, "run", (double)(index + 1)) ||
	    !cJSON_AddStringToObject(j, "phase", session_phase_name(r->phase)) ||
	    !add(j, "point", r->has_point ? env_point_levels_to_json(s->run.sp, &r->p)
	                                  : cJSON_CreateNull()) ||
	    !add(j, "env", r->try_no ? tryconf_env_json(&s->cfg.tries[r->try_no - 1], s->run.sp)
	                             : env_point_to_json(s->run.sp, r->has_point ? &r->p : NULL)) ||
	    !add_unset(s, j, r) ||
	    (r->try_no && !cJSON_AddNumberToObject(j, "try", (double)r->try_no)) ||
	    !cJSON_AddStringToObject(j, "outcome", outcome_class_name(o->cls)) ||
	    !add(j, "objective_us", isfinite(o->objective_us) ? cJSON_CreateNumber(o->objective_us)
	                                                       : cJSON_CreateNull()) ||
	    !cJSON_AddNumberToObject(j, "wall_s", round(o->wall_s * 1e4) / 1e4) ||
	    !cJSON_AddNumberToObject(j, "t_s", round(r->t_s * 1e3) / 1e3) ||
	    !cJSON_AddNumberToObject(j, "exit_status", o->exit_status) ||
	    !cJSON_AddNumberToObject(j, "signal", o->signal) ||
	    !cJSON_AddStringToObject(j, "error", o->error) ||
	    !cJSON_AddStringToObject(j, "stderr_tail", o->stderr_tail))
		goto fail;
	/* The probe's own object when it parsed as one (ok, or a failure with its stage). */
	if (raw_stdout && o->cls != OUTCOME_GARBAGE && o->cls != OUTCOME_CRASH &&
	    o->cls != OUTCOME_TIMEOUT && o->cls != OUTCOME_SPAWN)
		report = cJSON_ParseWithLength(raw_stdout, raw_len);
	if (report && !session_json_utf8(report)) {
		cJSON_Delete(report);
		goto fail;
	}
	if (!add(j, "report", report ? report : cJSON_CreateNull()))
		goto fail;
	if (r->phase == PHASE_SWEEP && !session_sweep_json(s, r, index, j))
		goto fail;
	if (o->cls == OUTCOME_GARBAGE && raw_stdout &&
	    !add(j, "stdout_head", raw_head(raw_stdout, raw_len, 400)))
		goto fail;
	return j;
fail:
	cJSON_Delete(j);
	return NULL;
}

/* ---- reading a journal back ---- */

struct loader {
	nccltune_session *s;
	const char *path;
	bool have_header;
	size_t cap;
	int status;
};

static int lfail(struct loader *L, size_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lfail(struct loader *L, size_t line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(L->s->err, sizeof L->s->err, "%s:%zu: %s", L->path, line, msg);
	L->status = NCCLTUNE_USAGE;
	return -1;
}

static const cJSON *need(struct loader *L, const cJSON *o, const char *key, int type_mask,
                         const char *what, size_t line)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!it) {
		lfail(L, line, "%s: missing", key);
		return NULL;
	}
	if (!(it->type & type_mask)) {
		lfail(L, line, "%s: must be %s", key, what);
		return NULL;
	}
	return it;
}

/* The session header (the journal's first record), read by header_read.c. */
static int load_header(struct loader *L, const cJSON *h, size_t line)
{
	char origin[PATH_MAX + 64];

	snprintf(origin, sizeof origin, "%s:%zu", L->path, line);
	if (session_header_read(L->s, h, origin) != 0) {
		L->status = NCCLTUNE_USAGE;
		return -1;
	}
	return 0;
}

/* Rebuild an outcome from a run record. */
/* An ablation run's "unset" (names of dimensions of its point, each once) into r->unset;
 * only a run of phase ablate with a point may have it. */
static int load_unset(struct loader *L, const cJSON *rec, struct session_run *r, size_t line)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(rec, "unset"), *v;

	if (!it)
		return 0;
	if (!cJSON_IsArray(it) || r->phase != PHASE_ABLATE || !r->has_point)
		return lfail(L, line, "unset: only an ablate run of a point leaves dimensions unset, "
		             "as an array of their names");
	cJSON_ArrayForEach(v, it) {
		size_t d = 0;

		while (d < space_dims(L->s->run.sp) &&
		       !(cJSON_IsString(v) && strcmp(v->valuestring, space_name(L->s->run.sp, d)) == 0))
			d++;
		if (d == space_dims(L->s->run.sp) || (r->unset >> d & 1u))
			return lfail(L, line, "unset: not a dimension of the session's space, or named "
			             "twice");
		r->unset |= 1u << d;
	}
	return r->unset ? 0 : lfail(L, line, "unset: empty");
}

static int load_outcome(struct loader *L, const cJSON *rec, struct outcome *o, size_t line)
{
	const cJSON *it;
	char perr[256];

	memset(o, 0, sizeof *o);
	o->objective_us = NAN;
	it = need(L, rec, "outcome", cJSON_String, "a string", line);
	if (!it)
		return -1;
	if (outcome_class_parse(it->valuestring, &o->cls) != 0)
		return lfail(L, line, "outcome: unknown class '%s'", it->valuestring);
	it = cJSON_GetObjectItemCaseSensitive(rec, "objective_us");
	if (o->cls == OUTCOME_OK) {
		if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0)
			return lfail(L, line, "objective_us: an ok run needs a number >= 0");
		o->objective_us = it->valuedouble;
	}
	it = cJSON_GetObjectItemCaseSensitive(rec, "wall_s");
	if (cJSON_IsNumber(it))
		o->wall_s = it->valuedouble;
	it = cJSON_GetObjectItemCaseSensitive(rec, "exit_status");
	if (cJSON_IsNumber(it))
		o->exit_status = (int)it->valuedouble;
	it = cJSON_GetObjectItemCaseSensitive(rec, "signal");
	if (cJSON_IsNumber(it))
		o->signal = (int)it->valuedouble;
	it = cJSON_GetObjectItemCaseSensitive(rec, "error");
	if (cJSON_IsString(it))
		snprintf(o->error, sizeof o->error, "%s", it->valuestring);
	it = cJSON_GetObjectItemCaseSensitive(rec, "stderr_tail");
	if (cJSON_IsString(it))
		snprintf(o->stderr_tail, sizeof o->stderr_tail, "%s", it->valuestring);
	it = cJSON_GetObjectItemCaseSensitive(rec, "report");
	if (cJSON_IsObject(it)) {
		char *text = cJSON_PrintUnformatted(it);

		if (!text)
			return lfail(L, line, "out of memory");
		if (proto_report_parse(text, strlen(text), &o->report, perr, sizeof perr) != 0) {
			free(text);
			return lfail(L, line, "report: %s", perr);
		}
		free(text);
		/* a sweep's entries are the record's "inner", read with it */
		proto_report_clear(&o->report);
	} else if (o->cls == OUTCOME_OK) {
		return lfail(L, line, "report: an ok run needs the probe's report");
	}
	return 0;
}

static int load_run(struct loader *L, const cJSON *rec, size_t line)
{
	nccltune_session *s = L->s;
	struct session_run *r;
	const cJSON *it;

	/* A session never runs past its budget, so a journal that holds more runs was
	 * edited: which of its runs count is anyone's guess. */
	if (s->run.nqueue >= (size_t)s->cfg.budget)
		return lfail(L, line, "run %zu: more runs than the header's budget of %d (a session "
		             "never records more; the journal was edited)", s->run.nqueue + 1,
		             s->cfg.budget);
	if (s->run.nqueue == L->cap) {
		size_t ncap = L->cap ? L->cap * 2 : 64;
		struct session_run *nq = realloc(s->run.queue, ncap * sizeof *nq);

		if (!nq)
			return lfail(L, line, "out of memory");
		s->run.queue = nq;
		L->cap = ncap;
	}
	r = &s->run.queue[s->run.nqueue];
	memset(r, 0, sizeof *r);
	it = need(L, rec, "phase", cJSON_String, "a string", line);
	if (!it)
		return -1;
	if (session_phase_parse(it->valuestring, &r->phase) != 0)
		return lfail(L, line, "phase: unknown phase '%s'", it->valuestring);
	it = cJSON_GetObjectItemCaseSensitive(rec, "try");
	if (it) {
		if (!cJSON_IsNumber(it) || it->valuedouble < 1 || it->valuedouble > (double)s->cfg.ntries ||
		    it->valuedouble != (double)(size_t)it->valuedouble)
			return lfail(L, line, "try: not the number of one of the header's %zu tries",
			             s->cfg.ntries);
		r->try_no = (size_t)it->valuedouble;
	} else if (r->phase == PHASE_TRY) {
		return lfail(L, line, "try: missing (a run of phase try says which try)");
	}
	it = cJSON_GetObjectItemCaseSensitive(rec, "point");
	if (r->try_no && cJSON_IsNull(it)) {
		/* an off-space try: its variables are in the header */
		if (r->phase == PHASE_SEARCH || r->phase == PHASE_WARM || r->phase == PHASE_BASELINE)
			return lfail(L, line, "try: a %s run is not a try's", session_phase_name(r->phase));
	} else if (r->try_no && r->phase == PHASE_BASELINE) {
		return lfail(L, line, "try: a baseline run is not a try's");
	} else if (r->phase == PHASE_BASELINE ||
	    ((r->phase == PHASE_RETRY || r->phase == PHASE_FINAL) && cJSON_IsNull(it))) {
		/* the baseline: its own phase, its retry, its final repeats */
		if (it && !cJSON_IsNull(it))
			return lfail(L, line, "point: the baseline has no point");
	} else {
		if (env_point_levels_from_json(s->run.sp, it, &r->p) != 0)
			return lfail(L, line, "point: not a point of the session's space");
		r->has_point = true;
	}
	if (load_unset(L, rec, r, line) != 0)
		return -1;
	if (load_outcome(L, rec, &r->o, line) != 0)
		return -1;
	if (r->phase == PHASE_SWEEP) {
		char origin[PATH_MAX + 64];

		snprintf(origin, sizeof origin, "%s:%zu", L->path, line);
		if (!s->run.two_level)
			return lfail(L, line, "phase: a sweep run in a journal whose header says "
			             "two_level false");
		if (!r->has_point)
			return lfail(L, line, "point: a sweep run has a point");
		if (session_sweep_read(s, rec, r, s->run.nqueue, origin) != 0) {
			L->status = NCCLTUNE_USAGE;
			return -1;
		}
	}
	it = cJSON_GetObjectItemCaseSensitive(rec, "t_s");
	r->t_s = cJSON_IsNumber(it) ? it->valuedouble : 0;
	s->run.nqueue++;
	return 0;
}

static int load_visit(void *ctx, const cJSON *rec, size_t line)
{
	struct loader *L = ctx;
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(rec, "type");

	if (!cJSON_IsString(type))
		return lfail(L, line, "type: missing or not a string");
	if (!L->have_header) {
		if (strcmp(type->valuestring, "session") != 0)
			return lfail(L, line, "the first record must be the session header");
		L->have_header = true;
		return load_header(L, rec, line);
	}
	if (strcmp(type->valuestring, "run") == 0)
		return load_run(L, rec, line);
	if (strcmp(type->valuestring, "session") == 0)
		return lfail(L, line, "a second session header");
	return 0;   /* a record type added later: nothing to replay */
}

int session_load_journal(nccltune_session *s, const char *dir)
{
	char path[PATH_MAX + 32], warn[1024], jerr[1024];
	struct loader L;
	int torn = 0, rc;

	memset(&L, 0, sizeof L);
	L.s = s;
	L.path = path;
	if (snprintf(path, sizeof path, "%s/journal.jsonl", dir) >= (int)sizeof path) {
		fs_errf(s->err, sizeof s->err, "%s: path too long", dir);
		return NCCLTUNE_USAGE;
	}
	if (access(path, F_OK) != 0) {
		fs_errf(s->err, sizeof s->err, "%s: no journal.jsonl: not a session folder (%s)",
		         dir, strerror(errno));
		return NCCLTUNE_USAGE;
	}
	rc = journal_replay(path, load_visit, &L, &torn, warn, sizeof warn, jerr, sizeof jerr);
	if (rc != 0) {
		if (L.status == 0)
			fs_errf(s->err, sizeof s->err, "%s", jerr);
		return L.status ? L.status : NCCLTUNE_USAGE;
	}
	if (!L.have_header) {
		fs_errf(s->err, sizeof s->err, "%s: empty journal (no session header)", path);
		return NCCLTUNE_USAGE;
	}
	if (torn)
		session_warn(&s->out, "%s", warn);
	return NCCLTUNE_OK;
}

/* ---- --warm-start: what an old session found ---- */

struct old_config {
	char *key;            /* the env object as text: identity of a configuration */
	struct point p;
	double sum;
	int ok, failed_verify;
	enum outcome_class fail_cls;
	int fails;
};

struct warm_loader {
	nccltune_session *s;
	cJSON *fingerprint;
	struct old_config *c;
	size_t n, cap;
	size_t unmapped;
	int status;
	char path[PATH_MAX + 32];
};

static struct old_config *old_find(struct warm_loader *W, const char *key)
{
	for (size_t i = 0; i < W->n; i++)
		if (strcmp(W->c[i].key, key) == 0)
			return &W->c[i];
	return NULL;
}

static int warm_visit(void *ctx, const cJSON *rec, size_t line)
{
	struct warm_loader *W = ctx;
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(rec, "type"), *env, *oc, *obj, *ph;
	struct old_config *c;
	enum outcome_class cls;
	struct point p;
	char *key;

	if (!cJSON_IsString(type))
		return 0;
	if (strcmp(type->valuestring, "session") == 0) {
		const cJSON *fp = cJSON_GetObjectItemCaseSensitive(rec, "fingerprint");

		if (cJSON_IsObject(fp) && !W->fingerprint)
			W->fingerprint = cJSON_Duplicate(fp, true);
		return 0;
	}
	if (strcmp(type->valuestring, "run") != 0)
		return 0;
	ph = cJSON_GetObjectItemCaseSensitive(rec, "phase");
	env = cJSON_GetObjectItemCaseSensitive(rec, "env");
	oc = cJSON_GetObjectItemCaseSensitive(rec, "outcome");
	obj = cJSON_GetObjectItemCaseSensitive(rec, "objective_us");
	if (!cJSON_IsString(ph) || !cJSON_IsObject(env) || !cJSON_IsString(oc) ||
	    outcome_class_parse(oc->valuestring, &cls) != 0) {
		fs_errf(W->s->err, sizeof W->s->err, "%s:%zu: not a run record of nccltune "
		        "(phase, env and outcome expected)", W->path, line);
		W->status = NCCLTUNE_USAGE;
		return -1;
	}
	if (strcmp(ph->valuestring, "baseline") == 0)
		return 0;
	if (env_point_from_json(W->s->run.sp, env, &p) != 0 || !space_allows(W->s->run.sp, &p)) {
		W->unmapped++;
		return 0;
	}
	key = cJSON_PrintUnformatted(env);
	if (!key)
		goto oom;
	c = old_find(W, key);
	if (!c) {
		if (W->n == W->cap) {
			size_t ncap = W->cap ? W->cap * 2 : 32;
			struct old_config *nc = realloc(W->c, ncap * sizeof *nc);

			if (!nc) {
				free(key);
				goto oom;
			}
			W->c = nc;
			W->cap = ncap;
		}
		c = &W->c[W->n++];
		memset(c, 0, sizeof *c);
		c->key = key;
		c->p = p;
	} else {
		free(key);
	}
	if (cls == OUTCOME_OK && cJSON_IsNumber(obj) && isfinite(obj->valuedouble)) {
		c->sum += obj->valuedouble;
		c->ok++;
	} else if (cls == OUTCOME_VERIFY) {
		c->failed_verify++;
	} else if (cls != OUTCOME_OK && !outcome_class_flaky(cls) && cls != OUTCOME_SPAWN) {
		c->fail_cls = cls;
		c->fails++;
	}
	return 0;
oom:
	fs_errf(W->s->err, sizeof W->s->err, "out of memory reading %s", W->path);
	W->status = NCCLTUNE_ERROR;
	return -1;
}

/* Same GPUs (count and names, in order)? Both fingerprints must be present. */
static bool fingerprints_comparable(const cJSON *a, const cJSON *b)
{
	const cJSON *ca, *cb, *ga, *gb, *x, *y;

	if (!a || !b)
		return false;
	ca = cJSON_GetObjectItemCaseSensitive(a, "gpu_count");
	cb = cJSON_GetObjectItemCaseSensitive(b, "gpu_count");
	if (!cJSON_IsNumber(ca) || !cJSON_IsNumber(cb) || ca->valuedouble != cb->valuedouble)
		return false;
	ga = cJSON_GetObjectItemCaseSensitive(a, "gpus");
	gb = cJSON_GetObjectItemCaseSensitive(b, "gpus");
	if (!cJSON_IsArray(ga) || !cJSON_IsArray(gb) ||
	    cJSON_GetArraySize(ga) != cJSON_GetArraySize(gb))
		return false;
	for (x = ga->child, y = gb->child; x && y; x = x->next, y = y->next) {
		const cJSON *na = cJSON_GetObjectItemCaseSensitive(x, "name");
		const cJSON *nb = cJSON_GetObjectItemCaseSensitive(y, "name");

		if (!cJSON_IsString(na) || !cJSON_IsString(nb) ||
		    strcmp(na->valuestring, nb->valuestring) != 0)
			return false;
	}
	return true;
}

static int cmp_old(const void *a, const void *b)
{
	const struct old_config *x = a, *y = b;
	double mx = x->sum / x->ok, my = y->sum / y->ok;

	return (mx > my) - (mx < my);
}

int session_warm_prepare(nccltune_session *s)
{
	struct warm_loader W;
	char jerr[1024];
	cJSON *warm = NULL, *configs, *fails;
	size_t nok = 0, taken = 0;
	bool comparable;
	int rc, status = NCCLTUNE_ERROR;

	memset(&W, 0, sizeof W);
	W.s = s;
	snprintf(W.path, sizeof W.path, "%s/journal.jsonl", s->cfg.warm_dir);
	rc = journal_replay(W.path, warm_visit, &W, NULL, NULL, 0, jerr, sizeof jerr);
	if (rc != 0) {
		if (W.status == 0) {
			fs_errf(s->err, sizeof s->err, "--warm-start: %s", jerr);
			W.status = NCCLTUNE_USAGE;
		}
		status = W.status;
		goto out;
	}
	comparable = fingerprints_comparable(W.fingerprint, s->run.fingerprint);
	warm = cJSON_CreateObject();
	if (!warm || !cJSON_AddStringToObject(warm, "from", s->cfg.warm_dir) ||
	    !cJSON_AddBoolToObject(warm, "comparable", comparable))
		goto oom;
	configs = cJSON_AddArrayToObject(warm, "configs");
	fails = cJSON_AddArrayToObject(warm, "failures");
	if (!configs || !fails)
		goto oom;
	/* Keep the configurations that ran and never gave a wrong sum, best first. */
	for (size_t i = 0; i < W.n; i++) {
		if (W.c[i].ok > 0 && W.c[i].failed_verify == 0) {
			struct old_config t = W.c[nok];

			W.c[nok] = W.c[i];
			W.c[i] = t;
			nok++;
		}
	}
	qsort(W.c, nok, sizeof *W.c, cmp_old);
	for (size_t i = 0; i < nok && taken < SESSION_WARM_MAX; i++, taken++)
		if (!cJSON_AddItemToArray(configs, env_point_levels_to_json(s->run.sp, &W.c[i].p)))
			goto oom;
	/* Deterministic failures of the same GPUs are worth knowing before spending runs
	 * on them; flaky ones (crash, hang) and those of other machines are not. */
	for (size_t i = 0; comparable && i < W.n; i++) {
		struct old_config *c = &W.c[i];
		cJSON *f;

		if (c->ok > 0 || (c->fails == 0 && c->failed_verify == 0))
			continue;
		f = cJSON_CreateObject();
		if (!f || !cJSON_AddItemToArray(fails, f)) {
			cJSON_Delete(f);
			goto oom;
		}
		if (!add(f, "point", env_point_levels_to_json(s->run.sp, &c->p)) ||
		    !cJSON_AddStringToObject(f, "outcome", outcome_class_name(
		        c->failed_verify ? OUTCOME_VERIFY : c->fail_cls)))
			goto oom;
	}
	if (!comparable)
		session_warn(&s->out, "--warm-start %s: %s; only its best "
		                      "configurations are reused (re-measured first)", s->cfg.warm_dir,
		                      W.fingerprint && s->run.fingerprint
		                          ? "different GPUs than this machine"
		                          : "no fingerprint to compare with this machine");
	session_note(&s->out, "warm start from %s: %zu configuration(s) to re-measure first%s%s",
	             s->cfg.warm_dir, taken, comparable ? ", " : "",
	             comparable ? "its failures known in advance" : "");
	if (W.unmapped)
		session_note(&s->out, "warm start: %zu old run(s) are outside this space; ignored",
		             W.unmapped);
	s->run.warm = warm;
	warm = NULL;
	status = NCCLTUNE_OK;
	goto out;
oom:
	fs_errf(s->err, sizeof s->err, "out of memory preparing the warm start");
out:
	for (size_t i = 0; i < W.n; i++)
		free(W.c[i].key);
	free(W.c);
	cJSON_Delete(W.fingerprint);
	cJSON_Delete(warm);
	return status;
}
