/* record.c - the one reader of journal.jsonl (record.h): one jsonread table per record
 * (the header, a run, a sweep run's "sweep" and each of its "inner" results), the checks
 * that tie a record's keys together, and the journal's order (the header first, once).
 * Resume and show / report / check both read through record_journal_read. */
#include "result/record.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "result/read.h"
#include "run/journal.h"
#include "run/tryconf.h"
#include "run/workload.h"
#include "search/twolevel.h"
#include "space/space.h"

static const char *const phase_words[] = {
	[PHASE_BASELINE] = "baseline", [PHASE_SEARCH] = "search", [PHASE_RETRY] = "retry",
	[PHASE_WARM] = "warm", [PHASE_FINAL] = "final", [PHASE_TRY] = "try",
	[PHASE_SWEEP] = "sweep", [PHASE_ABLATE] = "ablate", NULL,
};

const char *record_phase_name(int phase)
{
	return phase >= 0 && phase <= PHASE_ABLATE ? phase_words[phase] : "?";
}

int record_phase_parse(const char *s)
{
	for (int i = 0; i <= PHASE_ABLATE; i++)
		if (strcmp(s, phase_words[i]) == 0)
			return i;
	return -1;
}

/* jr_fail with `key` on the path. */
static int keyed_fail(struct jr *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int keyed_fail(struct jr *r, const char *key, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (jr_push_key(r, key) < 0)
		return -1;
	jr_fail(r, "%s", msg);
	jr_pop(r);
	return -1;
}

/* ---- the header ---- */

static const char *const schema_words[] = {RECORD_SCHEMA, RECORD_SCHEMA_2, NULL};

static const struct jr_field probe_word = {"", JR_STRING, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL};

static int check_arg(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	(void)i;
	(void)ctx;
	return jr_check(r, v, &probe_word, NULL) < 0 ? -1 : 0;
}

static int read_probe(struct jr *r, const cJSON *v, void *dst)
{
	(void)dst;
	if (cJSON_GetArraySize(v) == 0)
		return jr_fail(r, "empty command");
	return jr_each(r, v, RECORD_PROBE_MAX, check_arg, NULL);
}

/* A fingerprint results.json's readers would refuse is not taken from a header either. */
static int read_fingerprint(struct jr *r, const cJSON *v, void *dst)
{
	char perr[1024];

	(void)dst;
	if (summary_fingerprint_check(v, "fingerprint", perr, sizeof perr) != 0)
		return fs_errf(r->err, r->errlen, "%s: %s", r->origin, perr);
	return 0;
}

/* One capability word of the probe; words this version does not know are skipped, as
 * proto_capabilities_parse does. */
static int read_cap(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	unsigned *caps = ctx;

	(void)i;
	if (!cJSON_IsString(v))
		return jr_fail(r, "must be a string");
	for (unsigned bit = 1; bit && proto_capability_name(bit); bit <<= 1)
		if (strcmp(proto_capability_name(bit), v->valuestring) == 0)
			*caps |= bit;
	return 0;
}

static int read_caps(struct jr *r, const cJSON *v, void *dst)
{
	return jr_each(r, v, 32, read_cap, &((struct record_header *)dst)->caps);
}

#define H(f) offsetof(struct record_header, f)

/* Open: a later version may add keys; those read are type-checked. */
static const struct jr_field header_fields[] = {
	{"schema", JR_STRING, JR_REQUIRED, 0, 64, schema_words, JR_KEEP, 0, 0, NULL},
	{"type", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_KEEP, 0, 0, NULL},
	{"version", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_KEEP, 0, 0, NULL},
	{"created", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, H(created), RECORD_CREATED_MAX,
	 NULL},
	{"seed", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 18446744073709551615.0, NULL, JR_DOUBLE,
	 H(seed), 0, NULL},
	{"strategy", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, H(strategy),
	 RECORD_STRATEGY_MAX, NULL},
	{"budget", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1e6, NULL, JR_INT, H(budget), 0, NULL},
	{"time_limit_s", JR_NUMBER, JR_REQUIRED, 0, 1e9, NULL, JR_DOUBLE, H(time_limit_s), 0, NULL},
	{"timeout_s", JR_NUMBER, JR_REQUIRED, 0, 1e9, NULL, JR_DOUBLE, H(timeout_s), 0, NULL},
	{"probe", JR_ARRAY, JR_REQUIRED, 0, RECORD_PROBE_MAX, NULL, JR_ITEM, H(probe), 0,
	 read_probe},
	/* null: not recorded (a hand-made journal); resume needs it, show does not */
	{"space", JR_OBJECT | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_ITEM, H(space), 0, NULL},
	{"workload", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_ITEM, H(workload), 0, NULL},
	{"iters", JR_NUMBER, JR_INTEGER, 1, 1e9, NULL, JR_INT, H(iters), 0, NULL},
	{"warmup", JR_NUMBER, JR_INTEGER, 0, 1e9, NULL, JR_INT, H(warmup), 0, NULL},
	{"pinned", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_ITEM, H(pinned), 0, NULL},
	{"fingerprint", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_ITEM, H(fingerprint), 0,
	 read_fingerprint},
	{"warm_start", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_ITEM, H(warm_start), 0, NULL},
	{"auto_model", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, H(auto_model), 0, NULL},
	{"tries", JR_ARRAY, 0, 0, TRYCONF_MAX, NULL, JR_ITEM, H(tries), 0, NULL},
	{"server", JR_OBJECT, 0, 0, 0, NULL, JR_ITEM, H(server), 0, NULL},
	{"capabilities", JR_ARRAY, 0, 0, 32, NULL, JR_KEEP, 0, 0, read_caps},
	{"two_level", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, H(two_level), 0, NULL},
	JR_END,
};

static int header_read(struct jr *r, const cJSON *rec, struct record_header *h)
{
	const char *schema;

	memset(h, 0, sizeof *h);
	h->doc = rec;
	h->iters = h->warmup = -1;
	if (jr_dispatch(r, rec, header_fields, true, h, NULL) < 0)
		return -1;
	h->ntries = h->tries ? (size_t)cJSON_GetArraySize(h->tries) : 0;
	/* /2 says the journal may hold sweep runs: the two go together */
	schema = cJSON_GetObjectItemCaseSensitive(rec, "schema")->valuestring;
	if (h->two_level != (strcmp(schema, RECORD_SCHEMA_2) == 0))
		return keyed_fail(r, "two_level", "%s with schema %s (a two-level session writes "
		                  "%s, any other %s)", h->two_level ? "true" : "false", schema,
		                  RECORD_SCHEMA_2, RECORD_SCHEMA);
	return 0;
}

/* ---- a run ---- */

/* What the journal reader knows of the header when it reads a run. */
struct reader {
	const struct record_visitor *v;
	void *ctx;
	bool have_header, two_level;
	size_t ntries;
	int budget;                        /* in effect: the header's or the last extension's */
	long nruns;                        /* run records read */
};

/* A run record as jr_dispatch fills it: the run and what ties its keys together. */
struct run_doc {
	struct record_run run;
	const struct reader *rd;
	const cJSON *sweep, *inner;
};

static int read_phase(struct jr *r, const cJSON *v, void *dst)
{
	int ph = record_phase_parse(v->valuestring);

	if (ph < 0)
		return jr_fail(r, "unknown phase '%s'", v->valuestring);
	((struct run_doc *)dst)->run.phase = (enum session_phase)ph;
	return 0;
}

static int read_class(struct jr *r, const cJSON *v, void *dst)
{
	if (outcome_class_parse(v->valuestring, &((struct run_doc *)dst)->run.cls) != 0)
		return jr_fail(r, "unknown class '%s'", v->valuestring);
	return 0;
}

static int read_try(struct jr *r, const cJSON *v, void *dst)
{
	struct run_doc *d = dst;
	double x = v->valuedouble;

	if (x < 1 || x > (double)d->rd->ntries || x != (double)(size_t)x)
		return jr_fail(r, "not the number of one of the header's %zu tries", d->rd->ntries);
	d->run.try_no = (size_t)x;
	return 0;
}

/* env: the names and values every reader accepts (result/read.c, lenient: values are
 * shown; the point says what was tried). */
static int check_env(struct jr *r, const cJSON *v, void *dst)
{
	struct summary_env env = {0, NULL};
	int rc = summary_read_env_lenient(r, v, &env);

	(void)dst;
	free(env.v);
	return rc;
}

#define R(f) offsetof(struct run_doc, run.f)
#define RD(f) offsetof(struct run_doc, f)

/* Open: a later version may add keys (a new dimension of a run: one row here). */
static const struct jr_field run_fields[] = {
	{"type", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_KEEP, 0, 0, NULL},
	{"run", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 1e9, NULL, JR_LONG, R(run), 0, NULL},
	{"phase", JR_STRING, JR_REQUIRED, 0, 15, NULL, JR_KEEP, 0, 0, read_phase},
	{"try", JR_NUMBER, 0, 0, 0, NULL, JR_KEEP, 0, 0, read_try},
	{"point", JR_ARRAY | JR_NULL, 0, 0, SPACE_MAX_DIMS, NULL, JR_ITEM, R(point), 0, NULL},
	{"env", JR_OBJECT, JR_REQUIRED, 0, SUMMARY_ENV_MAX, NULL, JR_ITEM, R(env), 0, check_env},
	{"unset", JR_ARRAY, 0, 0, SPACE_MAX_DIMS, NULL, JR_ITEM, R(unset), 0, NULL},
	{"outcome", JR_STRING, JR_REQUIRED, 0, 15, NULL, JR_KEEP, 0, 0, read_class},
	{"objective_us", JR_NUMBER | JR_NULL, 0, 0, SUMMARY_OBJECTIVE_MAX, NULL, JR_DOUBLE,
	 R(objective_us), 0, NULL},
	{"wall_s", JR_NUMBER, 0, 0, 1e12, NULL, JR_DOUBLE, R(wall_s), 0, NULL},
	{"t_s", JR_NUMBER, 0, 0, 1e12, NULL, JR_DOUBLE, R(t_s), 0, NULL},
	{"exit_status", JR_NUMBER, JR_INTEGER, INT_MIN, INT_MAX, NULL, JR_INT, R(exit_status), 0,
	 NULL},
	{"signal", JR_NUMBER, JR_INTEGER, 0, INT_MAX, NULL, JR_INT, R(signal), 0, NULL},
	{"error", JR_STRING, JR_CONTROL, 0, PROTO_ERROR_MAX - 1, NULL, JR_STR, R(error), 0, NULL},
	{"stderr_tail", JR_STRING, JR_CONTROL, 0, 2047, NULL, JR_STR, R(stderr_tail), 0, NULL},
	{"report", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_ITEM, R(report), 0, NULL},
	{"stdout_head", JR_STRING, JR_CONTROL, 0, 511, NULL, JR_KEEP, 0, 0, NULL},
	{"sweep", JR_OBJECT, 0, 0, 0, NULL, JR_ITEM, RD(sweep), 0, NULL},
	{"inner", JR_ARRAY, 0, 0, TWOLEVEL_MAX_CHOICES + WORKLOAD_MAX_ENTRIES, NULL, JR_ITEM,
	 RD(inner), 0, NULL},
	JR_END,
};

/* What ties a run's keys together, whatever the reader: a try run says which try, an
 * ok run its time, "unset" only in an ablate run of a point. Which phase may have a
 * point is resume's to say (it rebuilds them); show describes what is there. */
static int run_keys_check(struct jr *r, struct record_run *run)
{
	if (run->phase == PHASE_TRY && !run->try_no)
		return keyed_fail(r, "try", "missing (a run of phase try says which try)");
	run->has_point = cJSON_IsArray(run->point);
	if (!run->has_point)
		run->point = NULL;
	if (run->unset && (run->phase != PHASE_ABLATE || !run->has_point))
		return keyed_fail(r, "unset", "only an ablate run of a point leaves dimensions unset, "
		                  "as an array of their names");
	if (run->unset && cJSON_GetArraySize(run->unset) == 0)
		return keyed_fail(r, "unset", "empty");
	for (const cJSON *u = run->unset ? run->unset->child : NULL; u; u = u->next)
		if (!cJSON_IsString(u))
			return keyed_fail(r, "unset", "not a dimension of the session's space, or named "
			                  "twice");
	if (run->cls != OUTCOME_OK)
		run->objective_us = NAN;
	else if (isnan(run->objective_us))   /* absent or null: nothing stored */
		return keyed_fail(r, "objective_us", "an ok run needs a number >= 0");
	return 0;
}

/* ---- a sweep run's "sweep" and "inner" ---- */

struct inner_doc {
	const cJSON *choice, *point;
	double bytes, us, objective;
	char outcome[16], error[256];
};

#define ID(f) offsetof(struct inner_doc, f)

static const struct jr_field inner_fields[] = {
	{"choice", JR_NUMBER | JR_NULL, JR_REQUIRED | JR_INTEGER, 0, TWOLEVEL_MAX_CHOICES - 1,
	 NULL, JR_ITEM, ID(choice), 0, NULL},
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 9007199254740991.0, NULL, JR_DOUBLE,
	 ID(bytes), 0, NULL},
	{"point", JR_ARRAY, JR_REQUIRED, 0, SPACE_MAX_DIMS, NULL, JR_ITEM, ID(point), 0, NULL},
	{"outcome", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, ID(outcome), 16, NULL},
	{"us", JR_NUMBER | JR_NULL, JR_REQUIRED, 0, 1e12, NULL, JR_DOUBLE, ID(us), 0, NULL},
	{"objective_us", JR_NUMBER | JR_NULL, JR_REQUIRED, 0, 1e15, NULL, JR_DOUBLE,
	 ID(objective), 0, NULL},
	{"error", JR_STRING, JR_REQUIRED | JR_CONTROL, 0, 255, NULL, JR_STRBUF, ID(error), 256,
	 NULL},
	JR_END,
};

static int read_inner(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct record_inner *in = &((struct record_run *)ctx)->inner[i];
	struct inner_doc d;

	memset(&d, 0, sizeof d);
	d.us = d.objective = NAN;
	if (!cJSON_IsObject(v))
		return jr_fail(r, "expected an object, got %s", jr_type_name(v));
	if (jr_dispatch(r, v, inner_fields, false, &d, NULL) < 0)
		return -1;
	memset(in, 0, sizeof *in);
	in->choice = cJSON_IsNumber(d.choice) ? (size_t)d.choice->valuedouble : TWOLEVEL_OWN;
	in->bytes = (uint64_t)d.bytes;
	in->point = d.point;
	if (outcome_class_parse(d.outcome, &in->cls) != 0)
		return keyed_fail(r, "outcome", "unknown class '%s'", d.outcome);
	if ((in->cls == OUTCOME_OK) != (isfinite(d.us) && isfinite(d.objective)))
		return keyed_fail(r, "us", "us and objective_us: numbers for an ok result, null "
		                  "otherwise");
	in->us = in->cls == OUTCOME_OK ? d.us : NAN;
	in->objective_us = in->cls == OUTCOME_OK ? d.objective : NAN;
	snprintf(in->error, sizeof in->error, "%s", d.error);
	((struct record_run *)ctx)->ninner = i + 1;
	return 0;
}

struct sweep_doc {
	double choices;
	bool in_flight;
};

static const struct jr_field sweep_fields[] = {
	{"choices", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, TWOLEVEL_MAX_CHOICES, NULL, JR_DOUBLE,
	 offsetof(struct sweep_doc, choices), 0, NULL},
	{"in_flight", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_BOOLEAN,
	 offsetof(struct sweep_doc, in_flight), 0, NULL},
	JR_END,
};

/* A sweep run's own keys; run->inner is malloc'd (the caller frees it). */
static int run_sweep_read(struct jr *r, const struct run_doc *d, struct record_run *run)
{
	struct sweep_doc sd = {0, false};
	int rc;

	if (!d->rd->two_level)
		return keyed_fail(r, "phase", "a sweep run in a journal whose header says two_level "
		                  "false");
	if (!run->has_point)
		return keyed_fail(r, "point", "a sweep run has a point");
	if (!d->sweep || !d->inner)
		return jr_fail(r, "%s: missing or not %s (a sweep run holds its inner results)",
		               d->sweep ? "inner" : "sweep", d->sweep ? "an array" : "an object");
	if (jr_push_key(r, "sweep") < 0)
		return -1;
	rc = jr_dispatch(r, d->sweep, sweep_fields, false, &sd, NULL);
	jr_pop(r);
	if (rc < 0)
		return -1;
	run->nchoices = (size_t)sd.choices;
	run->in_flight = sd.in_flight;
	run->inner = calloc((size_t)cJSON_GetArraySize(d->inner) + 1, sizeof *run->inner);
	if (!run->inner)
		return jr_fail(r, "out of memory");
	if (jr_push_key(r, "inner") < 0)
		return -1;
	rc = jr_each(r, d->inner, TWOLEVEL_MAX_CHOICES + WORKLOAD_MAX_ENTRIES, read_inner, run);
	jr_pop(r);
	return rc;
}

/* One run record into d->run (d->run.inner malloc'd: the caller frees it, even on
 * failure). */
static int run_read(struct jr *r, const struct reader *rd, const cJSON *rec, struct run_doc *d)
{
	struct record_run *run = &d->run;

	memset(d, 0, sizeof *d);
	d->rd = rd;
	run->doc = rec;
	run->error = run->stderr_tail = "";
	run->objective_us = NAN;
	if (jr_dispatch(r, rec, run_fields, true, d, NULL) < 0 ||
	    run_keys_check(r, run) < 0)
		return -1;
	if (run->phase == PHASE_SWEEP)
		return run_sweep_read(r, d, run);
	return 0;
}

/* ---- the journal ---- */

static const struct jr_field record_fields[] = {
	{"type", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_KEEP, 0, 0, NULL},
	JR_END,
};

struct visit_ctx {
	struct reader rd;
	const char *path;
	char *err;
	size_t errlen;
};

/* A reader of `path` for visitor v (with ctx), its message into err (emptied). */
static void visit_ctx_init(struct visit_ctx *c, const char *path,
                           const struct record_visitor *v, void *ctx, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	c->rd.v = v;
	c->rd.ctx = ctx;
	c->path = path;
	c->err = err;
	c->errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
}

static int visit_header(struct visit_ctx *c, struct jr *r, const cJSON *rec)
{
	struct record_header h;

	if (c->rd.have_header)
		return jr_fail(r, "a second session header");
	c->rd.have_header = true;
	if (header_read(r, rec, &h) < 0)
		return -1;
	c->rd.two_level = h.two_level;
	c->rd.ntries = h.ntries;
	c->rd.budget = h.budget;
	return c->rd.v->header ? c->rd.v->header(c->rd.ctx, r, &h) : 0;
}

static int visit_run(struct visit_ctx *c, struct jr *r, const cJSON *rec)
{
	struct run_doc d;
	int rc = run_read(r, &c->rd, rec, &d);

	if (rc == 0 && c->rd.v->run)
		rc = c->rd.v->run(c->rd.ctx, r, &d.run);
	free(d.run.inner);
	c->rd.nruns++;
	return rc;
}

#define B(f) offsetof(struct record_budget, f)

/* Open: a later version may add keys. */
static const struct jr_field budget_fields[] = {
	{"type", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_KEEP, 0, 0, NULL},
	{"budget", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1e6, NULL, JR_INT, B(budget), 0, NULL},
	{"runs", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 1e9, NULL, JR_LONG, B(runs), 0, NULL},
	{"t_s", JR_NUMBER, 0, 0, 1e12, NULL, JR_DOUBLE, B(t_s), 0, NULL},
	JR_END,
};

/* A budget record: the extension as it was allowed (a larger budget than the one in
 * effect and than the runs recorded; its run count the journal's). */
static int visit_budget(struct visit_ctx *c, struct jr *r, const cJSON *rec)
{
	struct record_budget b;

	memset(&b, 0, sizeof b);
	if (jr_dispatch(r, rec, budget_fields, true, &b, NULL) < 0)
		return -1;
	if (b.runs != c->rd.nruns)
		return keyed_fail(r, "runs", "%ld, but %ld run record(s) come before it",
		                  b.runs, c->rd.nruns);
	if (b.budget <= c->rd.budget || b.budget <= b.runs)
		return keyed_fail(r, "budget", "%d does not extend the session (its budget was %d, "
		                  "%ld run(s) recorded)", b.budget, c->rd.budget, b.runs);
	c->rd.budget = b.budget;
	return c->rd.v->budget ? c->rd.v->budget(c->rd.ctx, r, &b) : 0;
}

static int visit(void *ctx, const cJSON *rec, size_t line)
{
	struct visit_ctx *c = ctx;
	char origin[4096 + 32];
	const char *type;
	struct jr r;

	snprintf(origin, sizeof origin, "%s:%zu", c->path, line);
	jr_init(&r, origin, c->err, c->errlen);
	r.max_entries = 4096;
	if (jr_dispatch(&r, rec, record_fields, true, NULL, NULL) < 0)
		return -1;
	type = cJSON_GetObjectItemCaseSensitive(rec, "type")->valuestring;
	if (!c->rd.have_header && strcmp(type, "session") != 0)
		return jr_fail(&r, "the first record must be the session header");
	if (strcmp(type, "session") == 0)
		return visit_header(c, &r, rec);
	if (strcmp(type, "run") == 0)
		return visit_run(c, &r, rec);
	if (strcmp(type, "budget") == 0)
		return visit_budget(c, &r, rec);
	return 0;   /* a record type added later: nothing to read */
}

int record_journal_read(const char *path, const struct record_visitor *v, void *ctx,
                        int *torn, char *warn, size_t warnlen, char *err, size_t errlen)
{
	struct visit_ctx c;
	char jerr[1024] = "";
	int rc;

	visit_ctx_init(&c, path, v, ctx, err, errlen);
	rc = journal_replay(path, visit, &c, torn, warn, warnlen, jerr, sizeof jerr);
	if (rc != 0) {
		/* a record's message is in err already; the line reader's is in jerr */
		if (jerr[0])
			fs_errf(err, errlen, "%s", jerr);
		else if (!err || !err[0])
			fs_errf(err, errlen, "%s: unreadable journal", path);
		return -1;
	}
	if (!c.rd.have_header)
		return fs_errf(err, errlen, "%s: empty journal (no session header)", path);
	return 0;
}

int record_header_parse(const char *path, const char *line, size_t len,
                        const struct record_visitor *v, void *ctx, char *err, size_t errlen)
{
	struct visit_ctx c;
	cJSON *rec = NULL;
	int rc;

	visit_ctx_init(&c, path, v, ctx, err, errlen);
	if (len > 0 && line[len - 1] == '\n') {
		const char *end = NULL;

		rec = cJSON_ParseWithLengthOpts(line, len - 1, &end, false);
		/* as journal_replay: the object and blanks only */
		for (; rec && end && end < line + len - 1; end++)
			if (*end != ' ' && *end != '\t' && *end != '\r') {
				cJSON_Delete(rec);
				rec = NULL;
			}
	}
	if (!cJSON_IsObject(rec)) {
		cJSON_Delete(rec);
		return fs_errf(err, errlen, "%s:1: not a JSON object on one line (no session header)",
		               path);
	}
	rc = visit(&c, rec, 1);
	cJSON_Delete(rec);
	return rc == 0 ? 0 : -1;
}
