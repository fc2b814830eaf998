/* summary.c - load results.json and journal.jsonl strictly into a struct summary,
 * through common/jsonread (one table per object); NCCL variable names and values are
 * checked with common/ncclvars.
 *
 * Everything an export emits comes through here, so this file is where a hostile or
 * corrupt results file is stopped: each field is type-checked, numbers must be finite
 * and in range, keys must be known and unique, and a tuned value must be one NCCL would
 * parse the same way we read it (e.g. "010" is refused: NCCL reads it as octal 8). */
#include "result/summary.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "jsonread.h"
#include "ncclvars.h"
#include "proto.h"
#include "run/journal.h"

#define LENIENT_VALUE_MAX 1024   /* values only shown (pinned, failures): longer refused */
#define STRING_MAX 4096          /* free text of results.json */
#define GPUS_MAX 1024            /* GPUs in a fingerprint */
#define ENV_MAX 256              /* variables in one environment */
#define OBJECTIVE_MAX 1e12       /* microseconds per step: 11 days; anything above is corrupt */
#define BYTES_MAX 1099511627776.0

#define END {NULL, 0, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL}

/* snprintf that truncates silently: paths may be cut, never overflow. */
static void cut(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cut(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, len, fmt, ap);
	va_end(ap);
}

/* Run fn on `v` with `key` on the path. */
static int under(struct jr *r, const char *key, int (*fn)(struct jr *, const cJSON *, void *),
                 const cJSON *v, void *dst)
{
	int rc = jr_push_key(r, key);

	if (rc == 0) {
		rc = fn(r, v, dst);
		jr_pop(r);
	}
	return rc;
}

/* A lower-case word (outcome, stage): [a-z_]+. */
static int lower_word(struct jr *r, const cJSON *v, void *dst)
{
	(void)dst;
	for (const char *q = v->valuestring; *q; q++)
		if (!(islower((unsigned char)*q) || *q == '_'))
			return jr_fail(r, "must be a lower-case word");
	return 0;
}

const char *summary_env_get(const struct summary_env *env, const char *name)
{
	for (size_t i = 0; env && i < env->n; i++)
		if (strcmp(env->v[i].name, name) == 0)
			return env->v[i].value;
	return NULL;
}

/* ---- environments ---- */

enum env_check { ENV_STRICT, ENV_LENIENT, ENV_WHEN };

struct env_ctx { struct summary_env *env; enum env_check mode; };

/* Values that can be exported are checked by ncclvars (which names control characters
 * and lengths itself); values only shown are short plain strings; a pruned rule's
 * levels may also be null, the variable unset. */
static const struct jr_field env_value[] = {
	[ENV_STRICT] = {"", JR_STRING, JR_CONTROL, 0, 1 << 20, NULL, JR_KEEP, 0, 0, NULL},
	[ENV_LENIENT] = {"", JR_STRING, 0, 0, LENIENT_VALUE_MAX, NULL, JR_KEEP, 0, 0, NULL},
	[ENV_WHEN] = {"", JR_STRING | JR_NULL, 0, 0, LENIENT_VALUE_MAX, NULL, JR_KEEP, 0, 0,
	              NULL},
};

static int take_var(struct jr *r, const char *name, const cJSON *v, void *ctx)
{
	struct env_ctx *e = ctx;
	char why[256], q[80];

	if (ncclvars_name_check(name, why, sizeof(why)) < 0)
		return jr_fail(r, "%s", why);
	if (jr_check(r, v, &env_value[e->mode], NULL) < 0)
		return -1;
	if (e->mode == ENV_STRICT && ncclvars_check(name, v->valuestring, why, sizeof(why)) < 0)
		return jr_fail(r, "value %s refused: %s", jr_quote(v->valuestring, q, sizeof(q)), why);
	e->env->v[e->env->n].name = name;
	e->env->v[e->env->n].value = cJSON_IsNull(v) ? NULL : v->valuestring;
	e->env->n++;
	return 0;
}

/* An object of NCCL_* names to values, in `mode`; env->v is malloc'd. */
static int parse_env(struct jr *r, const cJSON *obj, enum env_check mode,
                     struct summary_env *env)
{
	struct env_ctx e = {env, mode};
	size_t n = (size_t)cJSON_GetArraySize(obj);

	env->n = 0;
	env->v = NULL;
	if (cJSON_IsObject(obj) && n > 0 && n <= ENV_MAX) {
		env->v = calloc(n, sizeof(env->v[0]));
		if (!env->v)
			return jr_fail(r, "out of memory");
	}
	return jr_map(r, obj, ENV_MAX, take_var, &e);
}

static int take_env_lenient(struct jr *r, const cJSON *v, void *dst)
{
	return parse_env(r, v, ENV_LENIENT, dst);
}

static int take_env_strict(struct jr *r, const cJSON *v, void *dst)
{
	return parse_env(r, v, ENV_STRICT, dst);
}

static int take_env_when(struct jr *r, const cJSON *v, void *dst)
{
	return parse_env(r, v, ENV_WHEN, dst);
}

static void env_free(struct summary_env *env)
{
	free(env->v);
	env->v = NULL;
	env->n = 0;
}

/* ---- fingerprint ---- */

void summary_fingerprint_clear(struct summary_fingerprint *fp)
{
	if (!fp)
		return;
	free(fp->gpus);
	free(fp->topology);
	memset(fp, 0, sizeof(*fp));
	fp->gpu_count = -1;
}

#define G(f) offsetof(struct summary_gpu, f)

static const struct jr_field gpu_fields[] = {
	{"index", JR_NUMBER | JR_NULL, JR_INTEGER, 0, 4096, NULL, JR_INT, G(index), 0, NULL},
	{"name", JR_STRING | JR_NULL, 0, 0, 256, NULL, JR_STR, G(name), 0, NULL},
	{"bus_id", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_STR, G(bus_id), 0, NULL},
	{"uuid", JR_STRING | JR_NULL, 0, 0, 128, NULL, JR_STR, G(uuid), 0, NULL},
	END,
};

static int take_gpu(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary_fingerprint *fp = ctx;

	fp->gpus[i].index = (int)i;
	fp->ngpus = i + 1;
	return jr_dispatch(r, v, gpu_fields, false, &fp->gpus[i], NULL);
}

static int take_gpus(struct jr *r, const cJSON *v, void *dst)
{
	struct summary_fingerprint *fp = dst;

	fp->gpus = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(fp->gpus[0]));
	if (!fp->gpus)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, GPUS_MAX, take_gpu, fp);
}

struct topo_row { struct summary_fingerprint *fp; size_t n, r; };

static int take_cell(struct jr *r, const cJSON *v, size_t k, void *ctx)
{
	struct topo_row *t = ctx;
	const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
	bool ok = s && strlen(s) <= 16;

	for (const char *c = s; ok && *c; c++)
		ok = (unsigned char)*c >= 0x20 && *c != 0x7f;
	if (!ok)
		return jr_fail(r, "expected a short link word (X, NV#, PIX, PXB, PHB, NODE, SYS)");
	t->fp->topology[t->r * t->n + k] = s;
	return 0;
}

static int take_row(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct topo_row t = *(struct topo_row *)ctx;

	t.r = i;
	if (jr_each(r, v, t.n, take_cell, &t) < 0)
		return -1;
	if ((size_t)cJSON_GetArraySize(v) != t.n)
		return jr_fail(r, "row has %d cells; the matrix is %zu x %zu", cJSON_GetArraySize(v),
		               t.n, t.n);
	return 0;
}

static int take_topology(struct jr *r, const cJSON *v, void *dst)
{
	struct topo_row t = {dst, (size_t)cJSON_GetArraySize(v), 0};

	if (t.n > 0) {
		t.fp->topology = calloc(t.n * t.n, sizeof(t.fp->topology[0]));
		if (!t.fp->topology)
			return jr_fail(r, "out of memory");
	}
	if (jr_each(r, v, GPUS_MAX, take_row, &t) < 0)
		return -1;
	t.fp->topo_n = t.n;
	return 0;
}

static const char *const fp_schema[] = {PROTO_FINGERPRINT_SCHEMA, NULL};
static const char *const sources[] = {"measured", "model", NULL};

#define F(f) offsetof(struct summary_fingerprint, f)
#define FP_STRING(key, f) {key, JR_STRING | JR_NULL, 0, 0, 256, NULL, JR_STR, F(f), 0, NULL}

/* Open: a probe may add keys; those read are type-checked. */
static const struct jr_field fp_fields[] = {
	{"schema", JR_STRING | JR_NULL, 0, 0, 64, fp_schema, JR_KEEP, 0, 0, NULL},
	{"source", JR_STRING | JR_NULL, 0, 0, 256, sources, JR_STR, F(source), 0, NULL},
	FP_STRING("model", model), FP_STRING("host", host), FP_STRING("kernel", kernel),
	FP_STRING("driver", driver), FP_STRING("cuda_runtime", cuda_runtime),
	FP_STRING("cuda_driver", cuda_driver), FP_STRING("nccl_version", nccl_version),
	{"gpu_count", JR_NUMBER | JR_NULL, JR_INTEGER, 0, GPUS_MAX, NULL, JR_INT, F(gpu_count), 0,
	 NULL},
	{"gpus", JR_ARRAY | JR_NULL, 0, 0, GPUS_MAX, NULL, JR_KEEP, 0, 0, take_gpus},
	{"topology", JR_ARRAY | JR_NULL, 0, 0, GPUS_MAX, NULL, JR_KEEP, 0, 0, take_topology},
	END,
};

/* The fingerprint `o` (path already pushed) into fp; fp is cleared on failure. */
static int fingerprint_read(struct jr *r, const cJSON *o, struct summary_fingerprint *fp)
{
	memset(fp, 0, sizeof(*fp));
	fp->gpu_count = -1;
	if (jr_dispatch(r, o, fp_fields, true, fp, NULL) < 0) {
		summary_fingerprint_clear(fp);
		return -1;
	}
	fp->present = true;
	return 0;
}

int summary_fingerprint_parse(const cJSON *o, const char *where, struct summary_fingerprint *fp,
                              char *err, size_t errlen)
{
	struct jr r;

	jr_init(&r, where, err, errlen);
	return fingerprint_read(&r, o, fp);
}

/* ---- results.json: the parts ---- */

static const char *const workload_schema[] = {"nccltune-workload/1", NULL};
static const char *const dtypes[] = {"bf16", "f16", "f32", NULL};
static const char *const allreduce[] = {"allreduce", NULL};

#define C(f) offsetof(struct summary_collective, f)

static const struct jr_field collective_fields[] = {
	{"op", JR_STRING, JR_REQUIRED, 0, 32, allreduce, JR_STR, C(op), 0, NULL},
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, BYTES_MAX, NULL, JR_U64, C(bytes), 0,
	 NULL},
	{"count", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1000000, NULL, JR_LONG, C(count), 0,
	 NULL},
	END,
};

static int take_collective(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary_workload *w = ctx;

	w->n = i + 1;
	return jr_dispatch(r, v, collective_fields, false, &w->c[i], NULL);
}

static int take_collectives(struct jr *r, const cJSON *v, void *dst)
{
	struct summary_workload *w = dst;

	if (!v->child)
		return jr_fail(r, "empty");
	w->c = calloc((size_t)cJSON_GetArraySize(v), sizeof(w->c[0]));
	if (!w->c)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, PROTO_MAX_SIZES, take_collective, w);
}

#define W(f) offsetof(struct summary_workload, f)

static const struct jr_field workload_fields[] = {
	{"schema", JR_STRING | JR_NULL, 0, 0, 64, workload_schema, JR_KEEP, 0, 0, NULL},
	{"dtype", JR_STRING, JR_REQUIRED, 0, 16, dtypes, JR_STR, W(dtype), 0, NULL},
	{"collectives", JR_ARRAY, JR_REQUIRED, 0, PROTO_MAX_SIZES, NULL, JR_KEEP, 0, 0,
	 take_collectives},
	{"iters", JR_NUMBER | JR_NULL, JR_INTEGER, 1, 1e7, NULL, JR_KEEP, 0, 0, NULL},
	{"warmup", JR_NUMBER | JR_NULL, JR_INTEGER, 0, 1e7, NULL, JR_KEEP, 0, 0, NULL},
	{"description", JR_STRING | JR_NULL, 0, 0, STRING_MAX, NULL, JR_STR, W(description), 0,
	 NULL},
	END,
};

static int take_workload(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (jr_dispatch(r, v, workload_fields, false, &s->workload, NULL) < 0)
		return -1;
	s->workload.present = true;
	return 0;
}

/* [low, high] within [0, max], when present (v may be NULL or null). */
static const struct jr_field ci_bound[] = {
	{"", JR_NUMBER, 0, 0, OBJECTIVE_MAX, NULL, JR_KEEP, 0, 0, NULL},
	{"", JR_NUMBER, 0, 0, 1e6, NULL, JR_KEEP, 0, 0, NULL},
};

struct ci { const struct jr_field *bound; };

static int check_bound(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	const struct ci *c = ctx;

	(void)i;
	return jr_check(r, v, c->bound, NULL) < 0 ? -1 : 0;
}

static int parse_ci(struct jr *r, const char *key, const cJSON *v, bool ratio, bool *has,
                    double *lo, double *hi)
{
	struct ci c = {&ci_bound[ratio]};
	int rc;

	*has = false;
	*lo = *hi = NAN;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (jr_push_key(r, key) < 0)
		return -1;
	rc = jr_each(r, v, 2, check_bound, &c);
	if (rc == 0 && cJSON_GetArraySize(v) != 2)
		rc = jr_fail(r, "expected [low, high]");
	if (rc == 0 && v->child->valuedouble > v->child->next->valuedouble) {
		char a[32], b[32];

		rc = jr_fail(r, "low %s is above high %s", jr_number(v->child->valuedouble, a, 32),
		             jr_number(v->child->next->valuedouble, b, 32));
	}
	jr_pop(r);
	if (rc < 0)
		return -1;
	*has = true;
	*lo = v->child->valuedouble;
	*hi = v->child->next->valuedouble;
	return 0;
}

/* baseline, best, top[i], and (with more keys) tries[i]. */
struct mdoc {
	const cJSON *env, *ci, *per_size, *ratio, *tuned;
	double objective;
	int repeats;
	bool in_space;
	const char *outcome;
};

#define M(f) offsetof(struct mdoc, f)
#define MEASURE_FIELDS(objective_flags) \
	{"env", JR_OBJECT, JR_REQUIRED, 0, ENV_MAX, NULL, JR_ITEM, M(env), 0, NULL}, \
	{"objective_us", JR_NUMBER | (objective_flags ? 0 : JR_NULL), objective_flags, 0, \
	 OBJECTIVE_MAX, NULL, JR_DOUBLE, M(objective), 0, NULL}, \
	{"ci95_us", JR_ARRAY | JR_NULL, 0, 0, 0, NULL, JR_ITEM, M(ci), 0, NULL}, \
	{"repeats", JR_NUMBER | JR_NULL, JR_INTEGER, 0, 1000000, NULL, JR_INT, M(repeats), 0, NULL}

/* per_size is read for best only; elsewhere it is allowed and not looked at. */
static const struct jr_field measure_fields[] = {
	MEASURE_FIELDS(JR_REQUIRED),
	{"per_size", JR_ANY, JR_CONTROL, 0, 1e9, NULL, JR_ITEM, M(per_size), 0, NULL},
	END,
};

static int parse_measure(struct jr *r, const cJSON *o, enum env_check mode,
                         struct summary_measure *m, struct mdoc *d)
{
	memset(d, 0, sizeof(*d));
	if (jr_dispatch(r, o, measure_fields, false, d, NULL) < 0)
		return -1;
	m->objective_us = d->objective;
	m->repeats = d->repeats;
	if (parse_ci(r, "ci95_us", d->ci, false, &m->has_ci, &m->ci_lo, &m->ci_hi) < 0 ||
	    under(r, "env", mode == ENV_STRICT ? take_env_strict : take_env_lenient, d->env,
	          &m->env) < 0)
		return -1;
	m->present = true;
	return 0;
}

static int take_baseline(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	struct mdoc d;

	return parse_measure(r, v, ENV_LENIENT, &s->baseline, &d);
}

#define P(f) offsetof(struct summary_size, f)

static const struct jr_field size_fields[] = {
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, BYTES_MAX, NULL, JR_U64, P(bytes), 0,
	 NULL},
	{"us", JR_NUMBER, JR_REQUIRED, 0, OBJECTIVE_MAX, NULL, JR_DOUBLE, P(us), 0, NULL},
	END,
};

static int take_size(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;

	s->nsizes = i + 1;
	return jr_dispatch(r, v, size_fields, false, &s->sizes[i], NULL);
}

static const struct jr_field per_size_field = {
	"", JR_ARRAY | JR_NULL, 0, 0, PROTO_MAX_SIZES, NULL, JR_KEEP, 0, 0, NULL,
};

static int take_per_size(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	int rc = jr_check(r, v, &per_size_field, NULL);

	if (rc <= 0 || !v->child)
		return rc;
	s->sizes = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->sizes[0]));
	if (!s->sizes)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, PROTO_MAX_SIZES, take_size, s);
}

static int take_best(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	struct mdoc d;

	if (parse_measure(r, v, ENV_STRICT, &s->best, &d) < 0)
		return -1;
	return d.per_size ? under(r, "per_size", take_per_size, d.per_size, s) : 0;
}

static int take_top1(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct mdoc d;

	s->ntop = i + 1;   /* so that destroy frees the env parsed so far */
	return parse_measure(r, v, ENV_LENIENT, &s->top[i], &d);
}

static int take_top(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->top = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->top[0]));
	if (!s->top)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 1000, take_top1, s);
}

/* {"ratio": r, "ci95": [lo, hi]} of a try, when present. */
struct ratio { double r; const cJSON *ci; };

static const struct jr_field ratio_fields[] = {
	{"ratio", JR_NUMBER, JR_REQUIRED, 0, 1e6, NULL, JR_DOUBLE, offsetof(struct ratio, r), 0,
	 NULL},
	{"ci95", JR_ARRAY | JR_NULL, 0, 0, 0, NULL, JR_ITEM, offsetof(struct ratio, ci), 0, NULL},
	END,
};

static int parse_ratio(struct jr *r, const char *key, const cJSON *v, bool *has, double *x,
                       double *lo, double *hi)
{
	struct ratio q = {NAN, NULL};
	bool have;
	int rc;

	*has = false;
	*x = *lo = *hi = NAN;
	if (!v)
		return 0;
	if (jr_push_key(r, key) < 0)
		return -1;
	rc = jr_dispatch(r, v, ratio_fields, false, &q, NULL);
	if (rc == 0)
		rc = parse_ci(r, "ci95", q.ci, true, &have, lo, hi);
	jr_pop(r);
	if (rc < 0)
		return -1;
	*has = true;
	*x = q.r;
	return 0;
}

static const struct jr_field try_fields[] = {
	MEASURE_FIELDS(0),
	{"in_space", JR_BOOL, 0, 0, 0, NULL, JR_BOOLEAN, M(in_space), 0, NULL},
	{"outcome", JR_STRING, JR_REQUIRED, 0, 16, NULL, JR_STR, M(outcome), 0, lower_word},
	{"ratio_vs_baseline", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_ITEM, M(ratio), 0, NULL},
	{"tuned_vs_try", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_ITEM, M(tuned), 0, NULL},
	END,
};

/* tries[i]: its env is checked as strictly as best's: an off-space try may be the best,
 * and its values came from the command line. */
static int take_try(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct summary_try *t = &s->tries[i];
	struct mdoc d;
	uint64_t seen;

	memset(&d, 0, sizeof(d));
	s->ntries = i + 1;
	if (jr_dispatch(r, v, try_fields, false, &d, &seen) < 0)
		return -1;
	t->m.present = (seen >> 1) & 1;   /* objective_us */
	t->m.objective_us = d.objective;
	t->m.repeats = d.repeats;
	t->in_space = d.in_space;
	t->outcome = d.outcome;
	if (parse_ci(r, "ci95_us", d.ci, false, &t->m.has_ci, &t->m.ci_lo, &t->m.ci_hi) < 0 ||
	    parse_ratio(r, "ratio_vs_baseline", d.ratio, &t->has_ratio, &t->ratio, &t->ratio_lo,
	                &t->ratio_hi) < 0 ||
	    parse_ratio(r, "tuned_vs_try", d.tuned, &t->has_tuned, &t->tuned, &t->tuned_lo,
	                &t->tuned_hi) < 0)
		return -1;
	return under(r, "env", take_env_strict, d.env, &t->m.env);
}

static int take_tries(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->tries = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->tries[0]));
	if (!s->tries)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 64, take_try, s);
}

#define FL(f) offsetof(struct summary_failure, f)

static const struct jr_field failure_fields[] = {
	{"env", JR_OBJECT, JR_REQUIRED, 0, ENV_MAX, NULL, JR_KEEP, 0, 0, NULL},
	{"stage", JR_STRING, JR_REQUIRED, 0, 16, NULL, JR_STR, FL(stage), 0, lower_word},
	{"count", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1e9, NULL, JR_LONG, FL(count), 0, NULL},
	END,
};

static int take_failure(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct summary_failure *f = &s->failures[i];

	s->nfailures = i + 1;
	if (jr_dispatch(r, v, failure_fields, false, f, NULL) < 0)
		return -1;
	return under(r, "env", take_env_lenient, cJSON_GetObjectItemCaseSensitive(v, "env"),
	             &f->env);
}

static int take_failures(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->failures = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->failures[0]));
	if (!s->failures)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 100000, take_failure, s);
}

static const struct jr_field pruned_fields[] = {
	{"when", JR_OBJECT, JR_REQUIRED, 0, ENV_MAX, NULL, JR_KEEP, 0, 0, NULL},
	{"reason", JR_STRING, JR_REQUIRED, 0, 1024, NULL, JR_STR,
	 offsetof(struct summary_pruned, reason), 0, NULL},
	END,
};

static int take_pruned1(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;

	s->npruned = i + 1;
	if (jr_dispatch(r, v, pruned_fields, false, &s->pruned[i], NULL) < 0)
		return -1;
	return under(r, "when", take_env_when, cJSON_GetObjectItemCaseSensitive(v, "when"),
	             &s->pruned[i].when);
}

static int take_pruned(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->pruned = calloc((size_t)cJSON_GetArraySize(v), sizeof(s->pruned[0]));
	if (!s->pruned)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 100000, take_pruned1, s);
}

/* ---- results.json: the top level ---- */

#define S(f) offsetof(struct summary, f)

static const struct jr_field tool_fields[] = {
	{"name", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_STR, S(tool_name), 0, NULL},
	{"version", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_STR, S(tool_version), 0, NULL},
	END,
};

static int take_tool(struct jr *r, const cJSON *v, void *dst)
{
	return jr_dispatch(r, v, tool_fields, false, dst, NULL);
}

static int take_fingerprint(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	return fingerprint_read(r, v, &s->fp);
}

static const struct jr_field gain_fields[] = {
	{"ratio", JR_NUMBER, JR_REQUIRED, 0, 1e6, NULL, JR_DOUBLE, S(gain), 0, NULL},
	{"ci95", JR_ARRAY | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, NULL},
	END,
};

static int take_gain(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	bool have;

	if (jr_dispatch(r, v, gain_fields, false, s, NULL) < 0 ||
	    parse_ci(r, "ci95", cJSON_GetObjectItemCaseSensitive(v, "ci95"), true, &have,
	             &s->gain_lo, &s->gain_hi) < 0)
		return -1;
	s->has_gain = true;
	return 0;
}

/* optional: results.json files written before nccltune recorded it have none */
static const struct jr_field noise_fields[] = {
	{"run_sd", JR_NUMBER, JR_REQUIRED, 0, 10, NULL, JR_DOUBLE, S(noise_sd), 0, NULL},
	{"configs", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, 1e6, NULL, JR_LONG, S(noise_configs), 0,
	 NULL},
	{"dof", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 2, 1e9, NULL, JR_LONG, S(noise_dof), 0, NULL},
	END,
};

static int take_noise(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (jr_dispatch(r, v, noise_fields, false, s, NULL) < 0)
		return -1;
	s->has_noise = true;
	return 0;
}

static int take_pinned(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	return parse_env(r, v, ENV_LENIENT, &s->pinned);
}

static const char *const result_schema[] = {"nccltune-result/1", NULL};

enum { ROOT_SEED = 9 };   /* index of "seed" below */

static const struct jr_field root_fields[] = {
	{"schema", JR_STRING, JR_REQUIRED, 0, 64, result_schema, JR_KEEP, 0, 0, NULL},
	{"tool", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_tool},
	{"created", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_STR, S(created), 0, NULL},
	{"fingerprint", JR_OBJECT | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0,
	 take_fingerprint},
	{"source", JR_STRING, JR_REQUIRED, 0, 16, sources, JR_STR, S(source), 0, NULL},
	{"model", JR_STRING | JR_NULL, 0, 0, 64, NULL, JR_STR, S(model), 0, NULL},
	{"workload", JR_OBJECT, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_workload},
	{"strategy", JR_STRING | JR_NULL, 0, 0, 32, NULL, JR_STR, S(strategy), 0, NULL},
	{"budget", JR_NUMBER | JR_NULL, JR_INTEGER, 0, 1e9, NULL, JR_LONG, S(budget), 0, NULL},
	[ROOT_SEED] = {"seed", JR_NUMBER | JR_NULL, JR_INTEGER, 0, 18446744073709551615.0, NULL,
	               JR_DOUBLE, S(seed), 0, NULL},
	{"pinned", JR_OBJECT | JR_NULL, 0, 0, ENV_MAX, NULL, JR_KEEP, 0, 0, take_pinned},
	{"baseline", JR_OBJECT | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_baseline},
	{"best", JR_OBJECT | JR_NULL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_best},
	{"gain", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_gain},
	{"noise", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_noise},
	{"top", JR_ARRAY | JR_NULL, 0, 0, 1000, NULL, JR_KEEP, 0, 0, take_top},
	{"evaluations", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 1e9, NULL, JR_LONG,
	 S(evaluations), 0, NULL},
	{"failures", JR_ARRAY | JR_NULL, 0, 0, 100000, NULL, JR_KEEP, 0, 0, take_failures},
	{"pruned", JR_ARRAY | JR_NULL, 0, 0, 100000, NULL, JR_KEEP, 0, 0, take_pruned},
	{"tries", JR_ARRAY, 0, 0, 64, NULL, JR_KEEP, 0, 0, take_tries},
	END,
};

static int parse_root(struct jr *r, const cJSON *root, struct summary *s)
{
	uint64_t seen;

	if (jr_dispatch(r, root, root_fields, false, s, &seen) < 0)
		return -1;
	s->has_seed = (seen >> ROOT_SEED) & 1;
	if (strcmp(s->source, "model") == 0 && !s->model) {
		jr_push_key(r, "model");
		return jr_fail(r, "missing (source is \"model\": the model's name is required)");
	}
	if (strcmp(s->source, "measured") == 0)
		s->model = NULL;
	return 0;
}

static struct summary *summary_new(void)
{
	struct summary *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fp.gpu_count = -1;
	s->budget = -1;
	s->gain_lo = s->gain_hi = NAN;
	return s;
}

int summary_parse(const char *text, size_t len, const char *origin, struct summary **out,
                  char *err, size_t errlen)
{
	struct summary *s;
	struct jr r;

	*out = NULL;
	s = summary_new();
	if (!s)
		return fs_errf(err, errlen, "%s: out of memory", origin);
	cut(s->origin, sizeof(s->origin), "%s", origin);
	jr_init(&r, s->origin, err, errlen);
	r.max_bytes = SUMMARY_RESULTS_MAX;
	s->doc = jr_parse(&r, text, len);
	if (!s->doc || parse_root(&r, s->doc, s) < 0) {
		summary_destroy(s);
		return -1;
	}
	*out = s;
	return 0;
}

/* ---- journal.jsonl ---- */

struct jvisit {
	struct summary *s;
	struct jr r;
	size_t cap;
};

/* Keep a copy of `item` alive as long as the summary (strings of the parsed structs
 * point into it). */
static cJSON *keep(struct summary *s, const cJSON *item)
{
	cJSON *dup;

	if (!s->jdoc) {
		s->jdoc = cJSON_CreateArray();
		if (!s->jdoc)
			return NULL;
	}
	dup = cJSON_Duplicate(item, true);
	if (!dup)
		return NULL;
	if (!cJSON_AddItemToArray(s->jdoc, dup)) {
		cJSON_Delete(dup);
		return NULL;
	}
	return dup;
}

static int take_arg(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	char **argv = ctx;
	const char *a = cJSON_IsString(v) ? v->valuestring : NULL;

	for (const char *c = a; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			a = NULL;
	if (!a)
		return jr_fail(r, "not a plain string");
	argv[i] = strdup(a);
	return argv[i] ? 0 : jr_fail(r, "out of memory");
}

/* The header's probe command, unless an earlier header gave one. */
static int take_probe(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	size_t n = (size_t)cJSON_GetArraySize(v);

	if (s->probe_argv || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsArray(v))
		return jr_fail(r, "expected an array, got %s", jr_type_name(v));
	if (n == 0)
		return jr_fail(r, "empty command");
	if (n > 256)
		return jr_fail(r, "more than 256 entries");
	s->probe_argv = calloc(n + 1, sizeof(s->probe_argv[0]));
	if (!s->probe_argv)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 256, take_arg, s->probe_argv);
}

/* The header's fingerprint, when results.json had none. */
static int take_header_fp(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;
	cJSON *dup;

	if (s->fp.present || cJSON_IsNull(v))
		return 0;
	dup = keep(s, v);
	if (!dup)
		return jr_fail(r, "out of memory");
	return fingerprint_read(r, dup, &s->fp);
}

/* Records are open: the journal holds much a report does not need. */
static const struct jr_field header_fields[] = {
	{"probe", JR_ANY, JR_CONTROL, 0, 1e9, NULL, JR_KEEP, 0, 0, take_probe},
	{"fingerprint", JR_ANY, JR_CONTROL, 0, 1e9, NULL, JR_KEEP, 0, 0, take_header_fp},
	END,
};

struct rundoc {
	double run;
	char phase[16], outcome[16];
	double objective;
	const cJSON *env;
};

#define RD(f) offsetof(struct rundoc, f)

static const struct jr_field run_fields[] = {
	{"run", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 1e9, NULL, JR_DOUBLE, RD(run), 0, NULL},
	{"phase", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, RD(phase), 16, NULL},
	{"outcome", JR_STRING, JR_REQUIRED, 0, 0, NULL, JR_STRBUF, RD(outcome), 16, NULL},
	{"objective_us", JR_NUMBER | JR_NULL, 0, 0, OBJECTIVE_MAX, NULL, JR_DOUBLE, RD(objective),
	 0, NULL},
	{"env", JR_OBJECT, JR_REQUIRED, 0, ENV_MAX, NULL, JR_ITEM, RD(env), 0, NULL},
	END,
};

static int visit_run(struct jvisit *v, const cJSON *rec)
{
	struct summary *s = v->s;
	struct summary_run *r;
	struct rundoc d = {0, "", "", NAN, NULL};
	cJSON *env;

	if (s->nruns == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 64;
		struct summary_run *nr = realloc(s->runs, ncap * sizeof(nr[0]));

		if (!nr)
			return jr_fail(&v->r, "out of memory");
		s->runs = nr;
		v->cap = ncap;
	}
	if (jr_dispatch(&v->r, rec, run_fields, true, &d, NULL) < 0)
		return -1;
	r = &s->runs[s->nruns];
	memset(r, 0, sizeof(*r));
	r->run = (long)d.run;
	memcpy(r->phase, d.phase, sizeof(r->phase));
	memcpy(r->outcome, d.outcome, sizeof(r->outcome));
	r->objective_us = strcmp(r->outcome, "ok") == 0 ? d.objective : NAN;
	s->nruns++;   /* counted before the env so that destroy frees what was parsed */
	env = keep(s, d.env);
	if (!env)
		return jr_fail(&v->r, "out of memory");
	return under(&v->r, "env", take_env_lenient, env, &r->env);
}

static const struct jr_field record_fields[] = {
	{"type", JR_STRING, JR_REQUIRED, 0, 32, NULL, JR_KEEP, 0, 0, NULL},
	END,
};

static int journal_visit(void *ctx, const cJSON *rec, size_t line)
{
	struct jvisit *v = ctx;
	const char *type;
	char lp[64];
	int rc;

	snprintf(lp, sizeof(lp), "line %zu", line);
	if (jr_push_key(&v->r, lp) < 0)
		return -1;
	rc = jr_dispatch(&v->r, rec, record_fields, true, NULL, NULL);
	type = rc == 0 ? cJSON_GetObjectItemCaseSensitive(rec, "type")->valuestring : "";
	if (rc == 0 && strcmp(type, "session") == 0)
		rc = jr_dispatch(&v->r, rec, header_fields, true, v->s, NULL);
	else if (rc == 0 && strcmp(type, "run") == 0)
		rc = visit_run(v, rec);
	/* record types added later: nothing for a report here */
	jr_pop(&v->r);
	return rc;
}

int summary_read_journal(struct summary *s, const char *path, char *err, size_t errlen)
{
	struct jvisit v;
	char jerr[1024] = "";
	int rc;

	memset(&v, 0, sizeof(v));
	v.s = s;
	jr_init(&v.r, path, err, errlen);
	rc = journal_replay(path, journal_visit, &v, &s->journal_torn, NULL, 0, jerr, sizeof(jerr));
	if (rc != 0) {
		/* A visitor error already wrote err; journal_replay's own goes to jerr. */
		if (jerr[0])
			fs_errf(err, errlen, "%s", jerr);
		else if (!err || !err[0])
			fs_errf(err, errlen, "%s: unreadable journal", path);
		return -1;
	}
	s->has_journal = true;
	return 0;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Forget the runs of a journal that could not be read to the end. */
static void drop_runs(struct summary *s)
{
	for (size_t i = 0; i < s->nruns; i++)
		env_free(&s->runs[i].env);
	free(s->runs);
	s->runs = NULL;
	s->nruns = 0;
	s->has_journal = false;
}

int summary_load(const char *path, unsigned flags, struct summary **out, char *err,
                 size_t errlen)
{
	char results[4200], jpath[4200];
	char *text = NULL;
	size_t len = 0;
	int rc = -1;

	*out = NULL;
	if (!path || !*path)
		return fs_errf(err, errlen, "no session folder or results.json given");
	if (is_dir(path)) {
		cut(results, sizeof(results), "%s/results.json", path);
		cut(jpath, sizeof(jpath), "%s/journal.jsonl", path);
		if (!exists(results) && (flags & SUMMARY_PARTIAL) && exists(jpath)) {
			struct summary *s = summary_new();

			if (!s)
				return fs_errf(err, errlen, "%s: out of memory", path);
			cut(s->origin, sizeof(s->origin), "%s", jpath);
			cut(s->dir, sizeof(s->dir), "%s", path);
			s->source = "measured";
			if (summary_read_journal(s, jpath, err, errlen) < 0) {
				summary_destroy(s);
				return -1;
			}
			*out = s;
			return 0;
		}
		if (!exists(results))
			return fs_errf(err, errlen, "%s: no results.json in this folder: the session has "
			               "not finished (resume it with nccltune run --resume)", path);
	} else {
		cut(results, sizeof(results), "%s", path);
		jpath[0] = '\0';
	}
	text = fs_read_file(results, SUMMARY_RESULTS_MAX, &len, err, errlen);
	if (!text)
		goto out;
	if (summary_parse(text, len, results, out, err, errlen) < 0)
		goto out;
	if (jpath[0])
		cut((*out)->dir, sizeof((*out)->dir), "%s", path);
	if (jpath[0] && (flags & (SUMMARY_JOURNAL | SUMMARY_JOURNAL_SOFT | SUMMARY_PARTIAL)) &&
	    exists(jpath)) {
		char jerr[sizeof((*out)->journal_error)];

		if (summary_read_journal(*out, jpath, jerr, sizeof(jerr)) < 0) {
			if (!(flags & SUMMARY_JOURNAL_SOFT)) {
				fs_errf(err, errlen, "%s", jerr);
				summary_destroy(*out);
				*out = NULL;
				goto out;
			}
			drop_runs(*out);
			cut((*out)->journal_error, sizeof((*out)->journal_error), "%s", jerr);
		}
	}
	rc = 0;
out:
	free(text);
	return rc;
}

void summary_destroy(struct summary *s)
{
	if (!s)
		return;
	summary_fingerprint_clear(&s->fp);
	free(s->workload.c);
	env_free(&s->pinned);
	env_free(&s->baseline.env);
	env_free(&s->best.env);
	free(s->sizes);
	for (size_t i = 0; i < s->ntop; i++)
		env_free(&s->top[i].env);
	free(s->top);
	for (size_t i = 0; i < s->ntries; i++)
		env_free(&s->tries[i].m.env);
	free(s->tries);
	for (size_t i = 0; i < s->nfailures; i++)
		env_free(&s->failures[i].env);
	free(s->failures);
	for (size_t i = 0; i < s->npruned; i++)
		env_free(&s->pruned[i].when);
	free(s->pruned);
	for (size_t i = 0; i < s->nruns; i++)
		env_free(&s->runs[i].env);
	free(s->runs);
	for (size_t i = 0; s->probe_argv && s->probe_argv[i]; i++)
		free(s->probe_argv[i]);
	free(s->probe_argv);
	cJSON_Delete(s->jdoc);
	cJSON_Delete(s->doc);
	free(s);
}

/* ---- human forms ---- */

char *summary_sanitize(const char *in, char *buf, size_t len)
{
	size_t o = 0;

	if (len == 0)
		return buf;
	for (; in && *in && o + 1 < len; in++) {
		unsigned char ch = (unsigned char)*in;

		buf[o++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	buf[o] = '\0';
	return buf;
}

char *summary_format_us(double us, char *buf, size_t len)
{
	if (!isfinite(us))
		snprintf(buf, len, "-");
	else if (us >= 1000.0)
		snprintf(buf, len, "%.2f ms", us / 1000.0);
	else
		snprintf(buf, len, "%.1f us", us);
	return buf;
}

/* Append printf output at *off, never past len. */
static void bprintf(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void bprintf(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*off = (size_t)n >= len - *off ? len : *off + (size_t)n;
}

char *summary_describe_machine(const struct summary_fingerprint *fp, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if (!fp->present) {
		bprintf(buf, len, &off, "unknown machine (no fingerprint)");
		return buf;
	}
	if (fp->ngpus > 0) {
		/* Group equal names: "8 x NVIDIA RTX PRO 6000" or "6 x A, 2 x B". */
		bool first = true;

		for (size_t i = 0; i < fp->ngpus; i++) {
			const char *name = fp->gpus[i].name ? fp->gpus[i].name : "GPU";
			bool seen = false;
			size_t count = 0;

			for (size_t j = 0; j < i; j++)
				if (strcmp(fp->gpus[j].name ? fp->gpus[j].name : "GPU", name) == 0)
					seen = true;
			if (seen)
				continue;
			for (size_t j = i; j < fp->ngpus; j++)
				if (strcmp(fp->gpus[j].name ? fp->gpus[j].name : "GPU", name) == 0)
					count++;
			bprintf(buf, len, &off, "%s%zu x %s", first ? "" : " + ", count, name);
			first = false;
		}
	} else if (fp->gpu_count >= 0) {
		bprintf(buf, len, &off, "%d GPUs", fp->gpu_count);
	} else {
		bprintf(buf, len, &off, "GPUs unknown");
	}
	if (fp->driver)
		bprintf(buf, len, &off, ", driver %s", fp->driver);
	if (fp->cuda_runtime)
		bprintf(buf, len, &off, ", CUDA %s", fp->cuda_runtime);
	if (fp->nccl_version)
		bprintf(buf, len, &off, ", NCCL %s", fp->nccl_version);
	if (fp->host)
		bprintf(buf, len, &off, ", host %s", fp->host);
	if (fp->source && strcmp(fp->source, "model") == 0)
		bprintf(buf, len, &off, " [model %s]", fp->model ? fp->model : "?");
	return buf;
}

char *summary_describe_workload(const struct summary_workload *w, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if (!w->present) {
		bprintf(buf, len, &off, "unknown workload");
		return buf;
	}
	for (size_t i = 0; i < w->n; i++)
		bprintf(buf, len, &off, "%s%ld x %llu B", i ? " + " : "", w->c[i].count,
		        (unsigned long long)w->c[i].bytes);
	bprintf(buf, len, &off, " all-reduce %s per step", w->dtype);
	return buf;
}

char *summary_describe_gain(const struct summary *s, char *buf, size_t len)
{
	char b[32], t[32];
	size_t off = 0;
	double ratio;

	if (len)
		buf[0] = '\0';
	if (!s->best.present) {
		bprintf(buf, len, &off, "no configuration worked");
		if (s->baseline.present)
			bprintf(buf, len, &off, " (baseline %s/step)",
			        summary_format_us(s->baseline.objective_us, b, sizeof(b)));
		return buf;
	}
	summary_format_us(s->best.objective_us, t, sizeof(t));
	if (!s->baseline.present) {
		bprintf(buf, len, &off, "tuned %s/step (no baseline measured)", t);
		return buf;
	}
	summary_format_us(s->baseline.objective_us, b, sizeof(b));
	ratio = s->has_gain ? s->gain
	        : (s->best.objective_us > 0 ? s->baseline.objective_us / s->best.objective_us : NAN);
	bprintf(buf, len, &off, "baseline %s/step, tuned %s/step", b, t);
	if (isfinite(ratio)) {
		if (ratio >= 1.005)
			bprintf(buf, len, &off, ": %.2fx faster", ratio);
		else if (ratio > 0.995)
			bprintf(buf, len, &off, ": %.2fx (no gain)", ratio);
		else
			bprintf(buf, len, &off, ": %.2fx (slower)", ratio);
		if (s->has_gain && isfinite(s->gain_lo))
			bprintf(buf, len, &off, " (95%% CI %.2f-%.2fx)", s->gain_lo, s->gain_hi);
		if (summary_gain_unproven(s))
			bprintf(buf, len, &off, "; not shown to be faster than NCCL's defaults");
	}
	return buf;
}

bool summary_gain_is_unproven(double gain, double gain_lo)
{
	return isfinite(gain) && gain >= 1.005 && isfinite(gain_lo) && gain_lo <= 1.0;
}

bool summary_gain_unproven(const struct summary *s)
{
	return s->best.present && s->best.env.n > 0 && s->baseline.present && s->has_gain &&
	       summary_gain_is_unproven(s->gain, s->gain_lo);
}

char *summary_describe_env(const struct summary_env *env, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	if (env->n == 0)
		bprintf(buf, len, &off, "(NCCL defaults)");
	for (size_t i = 0; i < env->n; i++) {
		if (env->v[i].value)
			bprintf(buf, len, &off, "%s%s=%s", i ? " " : "", env->v[i].name, env->v[i].value);
		else
			bprintf(buf, len, &off, "%s%s unset", i ? " " : "", env->v[i].name);
	}
	return buf;
}

/* ---- families ---- */

char *summary_family_label(const struct summary_env *env, char *buf, size_t len)
{
	const char *proto = summary_env_get(env, "NCCL_PROTO");
	const char *algo = summary_env_get(env, "NCCL_ALGO");
	char tmp[80];

	snprintf(tmp, sizeof(tmp), "%.36s / %.36s", proto ? proto : "default",
	         algo ? algo : "default");
	return summary_sanitize(tmp, buf, len);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_family(const void *a, const void *b)
{
	const struct summary_family *x = a, *y = b;

	if (isnan(x->best) != isnan(y->best))
		return isnan(x->best) ? 1 : -1;
	if (!isnan(x->best) && x->best != y->best)
		return x->best < y->best ? -1 : 1;
	return strcmp(x->label, y->label);
}

int summary_families(const struct summary *s, struct summary_family **out, size_t *n)
{
	struct summary_family *f = NULL;
	double *vals = NULL;
	size_t nf = 0;
	int rc = -1;

	*out = NULL;
	*n = 0;
	if (s->nruns == 0)
		return 0;
	f = calloc(s->nruns, sizeof(f[0]));
	vals = calloc(s->nruns, sizeof(vals[0]));
	if (!f || !vals)
		goto out;
	for (size_t i = 0; i < s->nruns; i++) {
		const struct summary_run *r = &s->runs[i];
		char label[80];
		size_t k;

		if (strcmp(r->phase, "baseline") == 0)
			continue;
		summary_family_label(&r->env, label, sizeof(label));
		for (k = 0; k < nf; k++)
			if (strcmp(f[k].label, label) == 0)
				break;
		if (k == nf) {
			snprintf(f[nf].label, sizeof(f[nf].label), "%s", label);
			nf++;
		}
		f[k].runs++;
		if (!isnan(r->objective_us))
			f[k].ok++;
	}
	for (size_t k = 0; k < nf; k++) {
		size_t m = 0;

		for (size_t i = 0; i < s->nruns; i++) {
			char label[80];

			if (strcmp(s->runs[i].phase, "baseline") == 0 || isnan(s->runs[i].objective_us))
				continue;
			if (strcmp(summary_family_label(&s->runs[i].env, label, sizeof(label)),
			           f[k].label) == 0)
				vals[m++] = s->runs[i].objective_us;
		}
		f[k].best = f[k].median = NAN;
		if (m > 0) {
			qsort(vals, m, sizeof(vals[0]), cmp_double);
			f[k].best = vals[0];
			f[k].median = m % 2 ? vals[m / 2] : 0.5 * (vals[m / 2 - 1] + vals[m / 2]);
		}
	}
	qsort(f, nf, sizeof(f[0]), cmp_family);
	*out = nf ? f : NULL;
	*n = nf;
	if (!nf)
		free(f);
	f = NULL;
	rc = 0;
out:
	free(f);
	free(vals);
	return rc;
}
