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

/* ---- resume: the journal read back (result/record.c), rebuilt into the session ---- */

struct loader {
	nccltune_session *s;
	size_t cap;
	int budget;       /* in effect at the run being read: the header's, or extended */
	int status;       /* NCCLTUNE_ERROR: out of memory; else a refused journal */
};

static int load_header(void *ctx, struct jr *r, const struct record_header *h)
{
	struct loader *L = ctx;

	L->budget = h->budget;
	return session_header_apply(L->s, r, h);
}

/* An extension of the budget (the reader checked that it extends): kept in order, for
 * the loop to apply at its run (session_budget_step). */
static int load_budget(void *ctx, struct jr *jr, const struct record_budget *b)
{
	struct loader *L = ctx;
	nccltune_session *s = L->s;
	struct session_extension *e;

	e = session_array_grow(s->run.ext, &s->run.exts_cap, s->run.nexts, sizeof *e, 4);
	if (!e) {
		L->status = NCCLTUNE_ERROR;
		return jr_fail(jr, "out of memory");
	}
	s->run.ext = e;
	s->run.ext[s->run.nexts].at = (size_t)b->runs;
	s->run.ext[s->run.nexts].budget = b->budget;
	s->run.nexts++;
	L->budget = b->budget;
	return 0;
}

/* An ablation run's "unset" (names the reader checked) into r->unset: dimensions of the
 * session's space, each once. */
static int load_unset(struct loader *L, struct jr *jr, const cJSON *names,
                      struct session_run *r)
{
	const space *sp = L->s->run.sp;
	const cJSON *v;

	cJSON_ArrayForEach(v, names) {
		size_t d = 0;

		while (d < space_dims(sp) && strcmp(v->valuestring, space_name(sp, d)) != 0)
			d++;
		if (d == space_dims(sp) || (r->unset >> d & 1u))
			return fs_errf(jr->err, jr->errlen, "%s: unset: not a dimension of the "
			               "session's space, or named twice", jr->origin);
		r->unset |= 1u << d;
	}
	return 0;
}

/* Which configuration a run ran, as resume rebuilds it: the phase, the try and the point
 * together (a baseline has no point, a search run one of the space's). */
static int load_config(struct loader *L, struct jr *jr, const struct record_run *rec,
                       struct session_run *r)
{
	const cJSON *pt = cJSON_GetObjectItemCaseSensitive(rec->doc, "point");
	enum session_phase ph = rec->phase;

	if (rec->try_no && cJSON_IsNull(pt)) {
		/* an off-space try: its variables are in the header */
		if (ph == PHASE_SEARCH || ph == PHASE_WARM || ph == PHASE_BASELINE)
			return fs_errf(jr->err, jr->errlen, "%s: try: a %s run is not a try's",
			               jr->origin, record_phase_name((int)ph));
	} else if (rec->try_no && ph == PHASE_BASELINE) {
		return fs_errf(jr->err, jr->errlen, "%s: try: a baseline run is not a try's",
		               jr->origin);
	} else if (ph == PHASE_BASELINE ||
	           ((ph == PHASE_RETRY || ph == PHASE_FINAL) && cJSON_IsNull(pt))) {
		/* the baseline: its own phase, its retry, its final repeats */
		if (rec->has_point)
			return fs_errf(jr->err, jr->errlen, "%s: point: the baseline has no point",
			               jr->origin);
	} else {
		if (!rec->has_point ||
		    env_point_levels_from_json(L->s->run.sp, rec->point, &r->p) != 0)
			return fs_errf(jr->err, jr->errlen, "%s: point: not a point of the session's "
			               "space", jr->origin);
		r->has_point = true;
	}
	return rec->unset ? load_unset(L, jr, rec->unset, r) : 0;
}

/* The outcome rebuilt; resume needs an ok run's report, read strictly (the probe's
 * protocol), its sweep entries left to the record's "inner". */
static int load_outcome(struct jr *jr, const struct record_run *rec, struct outcome *o)
{
	char perr[256], *text;
	int rc;

	memset(o, 0, sizeof *o);
	o->cls = rec->cls;
	o->objective_us = rec->objective_us;
	o->wall_s = rec->wall_s;
	o->exit_status = rec->exit_status;
	o->signal = rec->signal;
	snprintf(o->error, sizeof o->error, "%s", rec->error);
	snprintf(o->stderr_tail, sizeof o->stderr_tail, "%s", rec->stderr_tail);
	if (!rec->report) {
		if (rec->cls != OUTCOME_OK)
			return 0;
		return fs_errf(jr->err, jr->errlen, "%s: report: an ok run needs the probe's report",
		               jr->origin);
	}
	text = cJSON_PrintUnformatted(rec->report);
	if (!text)
		return jr_fail(jr, "out of memory");
	rc = proto_report_parse(text, strlen(text), &o->report, perr, sizeof perr);
	free(text);
	if (rc != 0)
		return fs_errf(jr->err, jr->errlen, "%s: report: %s", jr->origin, perr);
	proto_report_clear(&o->report);
	return 0;
}

/* Resume's policy for a run: no more runs than the budget, its configuration one of the
 * session's, an ok run's report present; the outcome rebuilt. */
static int load_run(void *ctx, struct jr *jr, const struct record_run *rec)
{
	struct loader *L = ctx;
	nccltune_session *s = L->s;
	struct session_run *r;

	/* A session never runs past its budget, so a journal that holds more runs was
	 * edited: which of its runs count is anyone's guess. */
	if (s->run.nqueue >= (size_t)L->budget)
		return jr_fail(jr, "run %zu: more runs than the %s budget of %d (a session "
		               "never records more; the journal was edited)", s->run.nqueue + 1,
		               s->run.nexts ? "extended" : "header's", L->budget);
	r = session_array_grow(s->run.queue, &L->cap, s->run.nqueue, sizeof *r, 64);
	if (!r) {
		L->status = NCCLTUNE_ERROR;
		return jr_fail(jr, "out of memory");
	}
	s->run.queue = r;
	r = &s->run.queue[s->run.nqueue];
	memset(r, 0, sizeof *r);
	r->phase = (enum session_phase)rec->phase;
	r->try_no = rec->try_no;
	if (load_config(L, jr, rec, r) != 0 || load_outcome(jr, rec, &r->o) != 0)
		return -1;
	if (rec->phase == PHASE_SWEEP &&
	    session_sweep_apply(s, jr, rec, r, s->run.nqueue) != 0)
		return -1;
	r->t_s = rec->t_s;
	s->run.nqueue++;
	return 0;
}

int session_load_journal(nccltune_session *s, const char *dir)
{
	static const struct record_visitor resume = {load_header, load_run, load_budget};
	char path[PATH_MAX + 32], warn[1024];
	struct loader L;
	int torn = 0;

	memset(&L, 0, sizeof L);
	L.s = s;
	L.status = NCCLTUNE_USAGE;
	if (snprintf(path, sizeof path, "%s/journal.jsonl", dir) >= (int)sizeof path) {
		fs_errf(s->err, sizeof s->err, "%s: path too long", dir);
		return NCCLTUNE_USAGE;
	}
	if (access(path, F_OK) != 0) {
		fs_errf(s->err, sizeof s->err, "%s: no journal.jsonl: not a session folder (%s)",
		         dir, strerror(errno));
		return NCCLTUNE_USAGE;
	}
	if (record_journal_read(path, &resume, &L, &torn, warn, sizeof warn, s->err,
	                        sizeof s->err) != 0)
		return L.status;
	if (torn)
		session_warn(&s->out, "%s", warn);
	return NCCLTUNE_OK;
}

/* ---- --resume DIR --budget N: the budget extended ---- */

int nccltune_session_extend(nccltune_session *s, int budget)
{
	int now = s->run.nexts ? s->run.ext[s->run.nexts - 1].budget : s->cfg.budget;
	struct session_extension *e;
	cJSON *rec = NULL;
	char err[1024];
	int rc = NCCLTUNE_OK;

	if (!s->resumed || s->started)
		return session_fail(s, NCCLTUNE_USAGE, "--budget: extends a resumed session only, "
		                    "before it runs");
	if (budget > 100000)
		return session_fail(s, NCCLTUNE_USAGE, "--budget: %d is not in 2..100000", budget);
	if (budget <= now || (size_t)budget <= s->run.nqueue)
		return session_fail(s, NCCLTUNE_USAGE, "--budget %d does not extend %s: its budget "
		                    "is %d runs and %zu are recorded; give a larger --budget, or "
		                    "none to continue within %d", budget, s->run.dir, now,
		                    s->run.nqueue, now);
	e = session_array_grow(s->run.ext, &s->run.exts_cap, s->run.nexts, sizeof *e, 4);
	if (!e)
		return session_fail(s, NCCLTUNE_ERROR, "out of memory");
	s->run.ext = e;
	/* journalled first: a later plain --resume continues with the larger budget */
	rec = cJSON_CreateObject();
	if (!rec || !cJSON_AddStringToObject(rec, "type", "budget") ||
	    !cJSON_AddNumberToObject(rec, "budget", budget) ||
	    !cJSON_AddNumberToObject(rec, "runs", (double)s->run.nqueue) ||
	    !cJSON_AddNumberToObject(rec, "t_s", s->run.t_offset)) {
		rc = session_fail(s, NCCLTUNE_ERROR, "out of memory");
		goto out;
	}
	if (journal_append(s->run.jr, rec, err, sizeof err) != 0) {
		rc = session_fail(s, NCCLTUNE_ERROR, "%s", err);
		goto out;
	}
	s->run.ext[s->run.nexts].at = s->run.nqueue;
	s->run.ext[s->run.nexts].budget = budget;
	s->run.nexts++;
	session_note(&s->out, "the budget extended from %d to %d runs: the search goes on "
	             "after the %zu recorded, then the final phase again", now, budget,
	             s->run.nqueue);
out:
	cJSON_Delete(rec);
	return rc;
}

/* ---- --warm-start: what an old session found ---- */

struct old_config {
	char *key;            /* its env (or levels) as text: identity of a configuration */
	struct point p;
	double sum;
	int ok, failed_verify;
	enum outcome_class fail_cls;
	int fails;
};

/* How the old session's runs map onto this space: by their env (the old space sets only
 * variables, so each run's per-size rules and server option were NCCL's and off), by
 * their levels (the same space), or not at all (an env cannot say which rule or server
 * option a run had). */
enum warm_map { WARM_BY_ENV, WARM_BY_POINT, WARM_NONE };

struct warm_loader {
	nccltune_session *s;
	enum warm_map map;
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

/* Does a recorded space (nccltune-space/1 as a journal header holds it) have a
 * dimension that is not an NCCL variable (a per-size rule, a server option)? */
static bool space_has_non_env(const cJSON *sp_json)
{
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(sp_json, "params");

	if (cJSON_GetObjectItemCaseSensitive(sp_json, "per_size") ||
	    cJSON_GetObjectItemCaseSensitive(sp_json, "server"))
		return true;
	for (const cJSON *d = cJSON_IsObject(params) ? params->child : NULL; d; d = d->next)
		if (d->string && strncmp(d->string, "NCCL_", 5) != 0)
			return true;
	return false;
}

static int warm_header(void *ctx, struct jr *r, const struct record_header *h)
{
	struct warm_loader *W = ctx;
	cJSON *mine = space_json_object(W->s->run.sp);

	if (!mine)
		goto oom;
	W->map = h->space && cJSON_Compare(h->space, mine, true) ? WARM_BY_POINT
	       : h->space && !space_has_non_env(h->space) ? WARM_BY_ENV : WARM_NONE;
	cJSON_Delete(mine);
	if (h->fingerprint) {
		W->fingerprint = cJSON_Duplicate(h->fingerprint, true);
		if (!W->fingerprint)
			goto oom;
	}
	return 0;
oom:
	W->status = NCCLTUNE_ERROR;
	return jr_fail(r, "out of memory");
}

/* The warm start's policy for a run: what its configuration measured, when it is a
 * point of this session's space (others are counted, not refused). */
static int warm_run(void *ctx, struct jr *r, const struct record_run *rec)
{
	struct warm_loader *W = ctx;
	struct old_config *c;
	struct point p;
	char *key;

	if (rec->phase == PHASE_BASELINE)
		return 0;
	/* by levels: what ran is the point, except a sweep (its best combination is not its
	 * point) and an ablation run (it left dimensions unset) */
	if (W->map == WARM_NONE ||
	    (W->map == WARM_BY_POINT &&
	     (!rec->has_point || rec->phase == PHASE_SWEEP || rec->unset ||
	      env_point_levels_from_json(W->s->run.sp, rec->point, &p) != 0)) ||
	    (W->map == WARM_BY_ENV && env_point_from_json(W->s->run.sp, rec->env, &p) != 0) ||
	    !space_allows(W->s->run.sp, &p)) {
		W->unmapped++;
		return 0;
	}
	key = W->map == WARM_BY_POINT ? cJSON_PrintUnformatted(rec->point)
	                              : cJSON_PrintUnformatted(rec->env);
	if (!key)
		goto oom;
	c = old_find(W, key);
	if (!c) {
		c = session_array_grow(W->c, &W->cap, W->n, sizeof *c, 32);
		if (!c) {
			free(key);
			goto oom;
		}
		W->c = c;
		c = &W->c[W->n++];
		memset(c, 0, sizeof *c);
		c->key = key;
		c->p = p;
	} else {
		free(key);
	}
	if (rec->cls == OUTCOME_OK) {
		c->sum += rec->objective_us;
		c->ok++;
	} else if (rec->cls == OUTCOME_VERIFY) {
		c->failed_verify++;
	} else if (!outcome_class_flaky(rec->cls) && rec->cls != OUTCOME_SPAWN) {
		c->fail_cls = rec->cls;
		c->fails++;
	}
	return 0;
oom:
	W->status = NCCLTUNE_ERROR;
	return jr_fail(r, "out of memory");
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
	static const struct record_visitor warm_visitor = {warm_header, warm_run, NULL};
	struct warm_loader W;
	char jerr[1024];
	cJSON *warm = NULL, *configs, *fails;
	size_t nok = 0, taken = 0;
	bool comparable;
	int rc, status = NCCLTUNE_ERROR;

	memset(&W, 0, sizeof W);
	W.s = s;
	snprintf(W.path, sizeof W.path, "%s/journal.jsonl", s->cfg.warm_dir);
	rc = record_journal_read(W.path, &warm_visitor, &W, NULL, NULL, 0, jerr, sizeof jerr);
	if (rc != 0) {
		fs_errf(s->err, sizeof s->err, "--warm-start: %s", jerr);
		status = W.status ? W.status : NCCLTUNE_USAGE;
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
	if (nok)   /* W.c is NULL when no old run mapped */
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
	if (W.map == WARM_NONE)
		session_note(&s->out, "warm start: the old session's space has per-size rules or a "
		             "server option and is not this one: which of them a run had is not in "
		             "its variables, so none of its %zu run(s) is reused", W.unmapped);
	else if (W.unmapped)
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
