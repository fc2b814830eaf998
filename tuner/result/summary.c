/* summary.c - load results.json and journal.jsonl strictly into a struct summary; NCCL
 * variable names and values are checked with common/ncclvars.
 *
 * Everything an export emits comes through here, so this file is where a hostile or
 * corrupt results file is stopped: each field is type-checked, numbers must be finite
 * and in range, keys must be known and unique, and a tuned value must be one NCCL would
 * parse the same way we read it (e.g. "010" is refused: NCCL reads it as octal 8). */
#include "result/summary.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "ncclvars.h"
#include "run/journal.h"
#include "proto.h"

#define PATH_KEY_MAX 256
#define LENIENT_VALUE_MAX 1024   /* values only shown (pinned, failures): longer refused */
#define STRING_MAX 4096          /* any other string of results.json */
#define KEYS_MAX 1024            /* members of one JSON object */
#define GPUS_MAX 1024            /* GPUs in a fingerprint */

/* Where messages go and what file they blame. */
struct ctx {
	const char *origin;
	char *err;
	size_t errlen;
};

static int fail(const struct ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const struct ctx *c, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (path && *path)
		return fs_errf(c->err, c->errlen, "%s: %s: %s", c->origin, path, msg);
	return fs_errf(c->err, c->errlen, "%s: %s", c->origin, msg);
}

/* snprintf that truncates silently: paths in messages may be cut, never overflow. */
static void cut(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void cut(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, len, fmt, ap);
	va_end(ap);
}

/* A value quoted for a message: sanitised and cut, so a hostile string cannot flood or
 * corrupt the terminal that shows the error. */
static const char *msgq(const char *s, char *buf, size_t len)
{
	char tmp[64];

	summary_sanitize(s, tmp, sizeof(tmp));
	cut(buf, len, "'%s%s'", tmp, strlen(s) >= sizeof(tmp) ? "..." : "");
	return buf;
}

static void join(char *dst, size_t len, const char *parent, const char *key)
{
	if (parent && *parent)
		cut(dst, len, "%s.%s", parent, key);
	else
		cut(dst, len, "%s", key);
}

static void join_index(char *dst, size_t len, const char *parent, size_t i)
{
	cut(dst, len, "%s[%zu]", parent, i);
}

static const char *type_name(const cJSON *j)
{
	if (cJSON_IsString(j)) return "a string";
	if (cJSON_IsNumber(j)) return "a number";
	if (cJSON_IsBool(j)) return "a boolean";
	if (cJSON_IsNull(j)) return "null";
	if (cJSON_IsArray(j)) return "an array";
	if (cJSON_IsObject(j)) return "an object";
	return "invalid";
}

/* ---- names and values ---- */

const char *summary_env_get(const struct summary_env *env, const char *name)
{
	for (size_t i = 0; env && i < env->n; i++)
		if (strcmp(env->v[i].name, name) == 0)
			return env->v[i].value;
	return NULL;
}

/* ---- strict JSON access ---- */

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* Reject keys outside `allowed` and duplicated keys (cJSON keeps both; a reader that
 * took the first and a writer that took the last would disagree). */
static int check_keys(const struct ctx *c, const cJSON *obj, const char *path,
                      const char *const *allowed)
{
	char q[96];
	size_t n = 0;

	/* the duplicate check is quadratic: bound it before a hostile file makes it hang */
	for (const cJSON *it = obj->child; it; it = it->next)
		if (++n > KEYS_MAX)
			return fail(c, path, "more than %d keys", KEYS_MAX);
	for (const cJSON *it = obj->child; it; it = it->next) {
		bool known = false;

		if (!it->string)
			return fail(c, path, "member without a key");
		for (size_t i = 0; allowed && allowed[i]; i++)
			if (strcmp(allowed[i], it->string) == 0)
				known = true;
		if (allowed && !known)
			return fail(c, path, "unknown key %s", msgq(it->string, q, sizeof(q)));
		for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
			if (strcmp(prev->string, it->string) == 0)
				return fail(c, path, "duplicate key %s", msgq(it->string, q, sizeof(q)));
	}
	return 0;
}

/* The member `key` of obj: NULL (and 0) when absent and optional; absent and required
 * is an error. JSON null counts as absent only when `nullable`. */
static int member(const struct ctx *c, const cJSON *obj, const char *path, const char *key,
                  bool required, bool nullable, const cJSON **out)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);
	char p[PATH_KEY_MAX];

	*out = NULL;
	join(p, sizeof(p), path, key);
	if (!m || (nullable && cJSON_IsNull(m))) {
		if (required && !m)
			return fail(c, p, "missing");
		return 0;
	}
	*out = m;
	return 0;
}

static int get_string(const struct ctx *c, const cJSON *obj, const char *path, const char *key,
                      bool required, size_t maxlen, const char **out)
{
	const cJSON *m;
	char p[PATH_KEY_MAX];

	*out = NULL;
	if (member(c, obj, path, key, required, !required, &m) < 0)
		return -1;
	if (!m)
		return 0;
	join(p, sizeof(p), path, key);
	if (!cJSON_IsString(m) || !m->valuestring)
		return fail(c, p, "expected a string, got %s", type_name(m));
	if (strlen(m->valuestring) > maxlen)
		return fail(c, p, "string longer than %zu bytes", maxlen);
	if (has_control(m->valuestring))
		return fail(c, p, "control character in the string");
	*out = m->valuestring;
	return 0;
}

/* A finite number in [lo, hi], integral when asked. */
static int check_number(const struct ctx *c, const cJSON *m, const char *p, double lo,
                        double hi, bool integral, double *out)
{
	double v;

	if (!cJSON_IsNumber(m))
		return fail(c, p, "expected a number, got %s", type_name(m));
	v = m->valuedouble;
	if (!isfinite(v))
		return fail(c, p, "not a finite number");
	if (integral && floor(v) != v)
		return fail(c, p, "expected an integer, got %g", v);
	if (v < lo || v > hi)
		return fail(c, p, "%g is out of range [%g, %g]", v, lo, hi);
	*out = v;
	return 0;
}

static int get_number(const struct ctx *c, const cJSON *obj, const char *path, const char *key,
                      bool required, double lo, double hi, bool integral, bool *present,
                      double *out)
{
	const cJSON *m;
	char p[PATH_KEY_MAX];

	if (present)
		*present = false;
	if (member(c, obj, path, key, required, !required, &m) < 0)
		return -1;
	if (!m)
		return 0;
	join(p, sizeof(p), path, key);
	if (check_number(c, m, p, lo, hi, integral, out) < 0)
		return -1;
	if (present)
		*present = true;
	return 0;
}

static int want_object(const struct ctx *c, const cJSON *m, const char *p)
{
	if (!cJSON_IsObject(m))
		return fail(c, p, "expected an object, got %s", type_name(m));
	return 0;
}

static int want_array(const struct ctx *c, const cJSON *m, const char *p, size_t max)
{
	if (!cJSON_IsArray(m))
		return fail(c, p, "expected an array, got %s", type_name(m));
	if ((size_t)cJSON_GetArraySize(m) > max)
		return fail(c, p, "more than %zu entries", max);
	return 0;
}

enum env_check { ENV_STRICT, ENV_LENIENT, ENV_WHEN };

/* An object of NCCL_* names to string values. ENV_STRICT (anything that can be
 * exported) checks the value's syntax for its variable; ENV_LENIENT (values only shown)
 * checks length and control characters; ENV_WHEN (a pruned rule's levels) is lenient and
 * also takes null, the variable unset, kept as a NULL value. env->v is malloc'd. */
static int parse_env(const struct ctx *c, const cJSON *obj, const char *p, enum env_check mode,
                     struct summary_env *env)
{
	char q[96], why[256], kp[PATH_KEY_MAX];
	size_t n = 0;

	env->n = 0;
	env->v = NULL;
	if (want_object(c, obj, p) < 0 || check_keys(c, obj, p, NULL) < 0)
		return -1;
	for (const cJSON *it = obj->child; it; it = it->next)
		n++;
	if (n > 256)
		return fail(c, p, "more than 256 variables");
	if (n == 0)
		return 0;
	env->v = calloc(n, sizeof(env->v[0]));
	if (!env->v)
		return fail(c, p, "out of memory");
	for (const cJSON *it = obj->child; it; it = it->next) {
		if (ncclvars_name_check(it->string, why, sizeof(why)) < 0)
			return fail(c, p, "%s: %s", msgq(it->string, q, sizeof(q)), why);
		join(kp, sizeof(kp), p, it->string);
		if (mode == ENV_WHEN && cJSON_IsNull(it)) {
			env->v[env->n].name = it->string;
			env->v[env->n].value = NULL;
			env->n++;
			continue;
		}
		if (!cJSON_IsString(it) || !it->valuestring)
			return fail(c, kp, "expected a string value%s, got %s",
			            mode == ENV_WHEN ? " or null" : "", type_name(it));
		if (mode == ENV_STRICT) {
			if (ncclvars_check(it->string, it->valuestring, why, sizeof(why)) < 0)
				return fail(c, kp, "value %s refused: %s", msgq(it->valuestring, q, sizeof(q)),
				            why);
		} else if (strlen(it->valuestring) > LENIENT_VALUE_MAX || has_control(it->valuestring)) {
			return fail(c, kp, "value too long or with a control character");
		}
		env->v[env->n].name = it->string;
		env->v[env->n].value = it->valuestring;
		env->n++;
	}
	return 0;
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

int summary_fingerprint_parse(const cJSON *o, const char *where, struct summary_fingerprint *fp,
                              char *err, size_t errlen)
{
	static const char *const str_keys[] = { "source", "model", "host", "kernel", "driver",
		"cuda_runtime", "cuda_driver", "nccl_version" };
	struct ctx c = { where, err, errlen };
	const char **str_dst[] = { &fp->source, &fp->model, &fp->host, &fp->kernel, &fp->driver,
		&fp->cuda_runtime, &fp->cuda_driver, &fp->nccl_version };
	const cJSON *m;
	const char *schema;
	double d;
	bool have;
	char p[PATH_KEY_MAX];

	memset(fp, 0, sizeof(*fp));
	fp->gpu_count = -1;
	if (want_object(&c, o, "") < 0 || check_keys(&c, o, "", NULL) < 0)
		return -1;
	if (get_string(&c, o, "", "schema", false, 64, &schema) < 0)
		goto fail;
	if (schema && strcmp(schema, PROTO_FINGERPRINT_SCHEMA) != 0) {
		fail(&c, "schema", "expected \"%s\"", PROTO_FINGERPRINT_SCHEMA);
		goto fail;
	}
	for (size_t i = 0; i < sizeof(str_keys) / sizeof(str_keys[0]); i++)
		if (get_string(&c, o, "", str_keys[i], false, 256, str_dst[i]) < 0)
			goto fail;
	if (fp->source && strcmp(fp->source, "measured") != 0 && strcmp(fp->source, "model") != 0) {
		fail(&c, "source", "expected \"measured\" or \"model\"");
		goto fail;
	}
	if (get_number(&c, o, "", "gpu_count", false, 0, GPUS_MAX, true, &have, &d) < 0)
		goto fail;
	if (have)
		fp->gpu_count = (int)d;
	if (member(&c, o, "", "gpus", false, true, &m) < 0)
		goto fail;
	if (m) {
		size_t i = 0;

		if (want_array(&c, m, "gpus", GPUS_MAX) < 0)
			goto fail;
		fp->gpus = calloc((size_t)cJSON_GetArraySize(m) + 1, sizeof(fp->gpus[0]));
		if (!fp->gpus) {
			fail(&c, "gpus", "out of memory");
			goto fail;
		}
		for (const cJSON *g = m->child; g; g = g->next, i++) {
			static const char *const gkeys[] = { "index", "name", "bus_id", "uuid", NULL };
			struct summary_gpu *gpu = &fp->gpus[i];

			join_index(p, sizeof(p), "gpus", i);
			if (want_object(&c, g, p) < 0 || check_keys(&c, g, p, gkeys) < 0)
				goto fail;
			gpu->index = (int)i;
			if (get_number(&c, g, p, "index", false, 0, 4096, true, &have, &d) < 0)
				goto fail;
			if (have)
				gpu->index = (int)d;
			if (get_string(&c, g, p, "name", false, 256, &gpu->name) < 0 ||
			    get_string(&c, g, p, "bus_id", false, 64, &gpu->bus_id) < 0 ||
			    get_string(&c, g, p, "uuid", false, 128, &gpu->uuid) < 0)
				goto fail;
		}
		fp->ngpus = i;
	}
	if (member(&c, o, "", "topology", false, true, &m) < 0)
		goto fail;
	if (m) {
		size_t n, r = 0;

		if (want_array(&c, m, "topology", GPUS_MAX) < 0)
			goto fail;
		n = (size_t)cJSON_GetArraySize(m);
		if (n > 0) {
			fp->topology = calloc(n * n, sizeof(fp->topology[0]));
			if (!fp->topology) {
				fail(&c, "topology", "out of memory");
				goto fail;
			}
		}
		for (const cJSON *row = m->child; row; row = row->next, r++) {
			size_t k = 0;

			join_index(p, sizeof(p), "topology", r);
			if (want_array(&c, row, p, n) < 0)
				goto fail;
			if ((size_t)cJSON_GetArraySize(row) != n) {
				fail(&c, p, "row has %d cells; the matrix is %zu x %zu", cJSON_GetArraySize(row),
				     n, n);
				goto fail;
			}
			for (const cJSON *cell = row->child; cell; cell = cell->next, k++) {
				char cp[PATH_KEY_MAX];

				join_index(cp, sizeof(cp), p, k);
				if (!cJSON_IsString(cell) || !cell->valuestring ||
				    strlen(cell->valuestring) > 16 || has_control(cell->valuestring)) {
					fail(&c, cp, "expected a short link word (X, NV#, PIX, PXB, PHB, NODE, SYS)");
					goto fail;
				}
				fp->topology[r * n + k] = cell->valuestring;
			}
		}
		fp->topo_n = n;
	}
	fp->present = true;
	return 0;
fail:
	summary_fingerprint_clear(fp);
	return -1;
}

/* ---- results.json ---- */

static int parse_workload(const struct ctx *c, const cJSON *o, struct summary_workload *w)
{
	static const char *const keys[] = { "schema", "dtype", "collectives", "iters", "warmup",
		"description", NULL };
	static const char *const ckeys[] = { "op", "bytes", "count", NULL };
	const cJSON *m;
	const char *schema;
	enum proto_dtype dt;
	size_t i = 0;
	double d;
	char p[PATH_KEY_MAX];

	if (want_object(c, o, "workload") < 0 || check_keys(c, o, "workload", keys) < 0)
		return -1;
	if (get_string(c, o, "workload", "schema", false, 64, &schema) < 0)
		return -1;
	if (schema && strcmp(schema, "nccltune-workload/1") != 0)
		return fail(c, "workload.schema", "expected \"nccltune-workload/1\"");
	if (get_string(c, o, "workload", "dtype", true, 16, &w->dtype) < 0 ||
	    get_string(c, o, "workload", "description", false, STRING_MAX, &w->description) < 0 ||
	    get_number(c, o, "workload", "iters", false, 1, 1e7, true, NULL, &d) < 0 ||
	    get_number(c, o, "workload", "warmup", false, 0, 1e7, true, NULL, &d) < 0)
		return -1;
	if (proto_dtype_parse(w->dtype, &dt) < 0)
		return fail(c, "workload.dtype", "unknown dtype (bf16, f16, f32)");
	if (member(c, o, "workload", "collectives", true, false, &m) < 0 ||
	    want_array(c, m, "workload.collectives", PROTO_MAX_SIZES) < 0)
		return -1;
	if (cJSON_GetArraySize(m) == 0)
		return fail(c, "workload.collectives", "empty");
	w->c = calloc((size_t)cJSON_GetArraySize(m), sizeof(w->c[0]));
	if (!w->c)
		return fail(c, "workload.collectives", "out of memory");
	for (const cJSON *e = m->child; e; e = e->next, i++) {
		join_index(p, sizeof(p), "workload.collectives", i);
		if (want_object(c, e, p) < 0 || check_keys(c, e, p, ckeys) < 0)
			return -1;
		if (get_string(c, e, p, "op", true, 32, &w->c[i].op) < 0)
			return -1;
		if (strcmp(w->c[i].op, "allreduce") != 0)
			return fail(c, p, "op must be \"allreduce\"");
		if (get_number(c, e, p, "bytes", true, 1, 1099511627776.0, true, NULL, &d) < 0)
			return -1;
		w->c[i].bytes = (uint64_t)d;
		if (get_number(c, e, p, "count", true, 1, 1000000, true, NULL, &d) < 0)
			return -1;
		w->c[i].count = (long)d;
	}
	w->n = i;
	w->present = true;
	return 0;
}

static int parse_ci(const struct ctx *c, const cJSON *o, const char *path, const char *key,
                    bool *has, double *lo, double *hi, double max)
{
	const cJSON *m;
	char p[PATH_KEY_MAX];
	double a, b;

	*has = false;
	*lo = *hi = NAN;
	if (member(c, o, path, key, false, true, &m) < 0 || !m)
		return 0;
	join(p, sizeof(p), path, key);
	if (want_array(c, m, p, 2) < 0)
		return -1;
	if (cJSON_GetArraySize(m) != 2)
		return fail(c, p, "expected [low, high]");
	if (check_number(c, m->child, p, 0, max, false, &a) < 0 ||
	    check_number(c, m->child->next, p, 0, max, false, &b) < 0)
		return -1;
	if (a > b)
		return fail(c, p, "low %g is above high %g", a, b);
	*has = true;
	*lo = a;
	*hi = b;
	return 0;
}

#define OBJECTIVE_MAX 1e12    /* microseconds per step: 11 days; anything above is corrupt */

static int parse_measure(const struct ctx *c, const cJSON *o, const char *p, enum env_check mode,
                         struct summary_measure *m)
{
	static const char *const keys[] = { "env", "objective_us", "ci95_us", "per_size",
		"repeats", NULL };
	const cJSON *e;
	double d;
	bool have;
	char ep[PATH_KEY_MAX];

	if (want_object(c, o, p) < 0 || check_keys(c, o, p, keys) < 0)
		return -1;
	if (member(c, o, p, "env", true, false, &e) < 0)
		return -1;
	join(ep, sizeof(ep), p, "env");
	if (parse_env(c, e, ep, mode, &m->env) < 0)
		return -1;
	if (get_number(c, o, p, "objective_us", true, 0, OBJECTIVE_MAX, false, NULL,
	               &m->objective_us) < 0)
		return -1;
	if (parse_ci(c, o, p, "ci95_us", &m->has_ci, &m->ci_lo, &m->ci_hi, OBJECTIVE_MAX) < 0)
		return -1;
	if (get_number(c, o, p, "repeats", false, 0, 1000000, true, &have, &d) < 0)
		return -1;
	m->repeats = have ? (int)d : 0;
	m->present = true;
	return 0;
}

static int parse_per_size(const struct ctx *c, const cJSON *best, struct summary *s)
{
	static const char *const keys[] = { "bytes", "us", NULL };
	const cJSON *m;
	size_t i = 0;
	char p[PATH_KEY_MAX];

	if (member(c, best, "best", "per_size", false, true, &m) < 0 || !m)
		return 0;
	if (want_array(c, m, "best.per_size", PROTO_MAX_SIZES) < 0)
		return -1;
	if (cJSON_GetArraySize(m) == 0)
		return 0;
	s->sizes = calloc((size_t)cJSON_GetArraySize(m), sizeof(s->sizes[0]));
	if (!s->sizes)
		return fail(c, "best.per_size", "out of memory");
	for (const cJSON *e = m->child; e; e = e->next, i++) {
		double d;

		join_index(p, sizeof(p), "best.per_size", i);
		if (want_object(c, e, p) < 0 || check_keys(c, e, p, keys) < 0)
			return -1;
		if (get_number(c, e, p, "bytes", true, 1, 1099511627776.0, true, NULL, &d) < 0)
			return -1;
		s->sizes[i].bytes = (uint64_t)d;
		if (get_number(c, e, p, "us", true, 0, OBJECTIVE_MAX, false, NULL, &s->sizes[i].us) < 0)
			return -1;
	}
	s->nsizes = i;
	return 0;
}

static int parse_top(const struct ctx *c, const cJSON *root, struct summary *s)
{
	const cJSON *m;
	size_t i = 0;
	char p[PATH_KEY_MAX];

	if (member(c, root, "", "top", false, true, &m) < 0 || !m)
		return 0;
	if (want_array(c, m, "top", 1000) < 0)
		return -1;
	if (cJSON_GetArraySize(m) == 0)
		return 0;
	s->top = calloc((size_t)cJSON_GetArraySize(m), sizeof(s->top[0]));
	if (!s->top)
		return fail(c, "top", "out of memory");
	for (const cJSON *e = m->child; e; e = e->next, i++) {
		join_index(p, sizeof(p), "top", i);
		s->ntop = i + 1;   /* so that destroy frees the env parsed so far */
		if (parse_measure(c, e, p, ENV_LENIENT, &s->top[i]) < 0)
			return -1;
	}
	return 0;
}

/* {"ratio": r, "ci95": [lo, hi]} of a try, when present. */
static int parse_try_ratio(const struct ctx *c, const cJSON *o, const char *p, const char *key,
                           bool *has, double *r, double *lo, double *hi)
{
	static const char *const keys[] = { "ratio", "ci95", NULL };
	const cJSON *m;
	char kp[PATH_KEY_MAX];
	bool have;

	*has = false;
	*r = *lo = *hi = NAN;
	if (member(c, o, p, key, false, true, &m) < 0 || !m)
		return 0;
	join(kp, sizeof(kp), p, key);
	if (want_object(c, m, kp) < 0 || check_keys(c, m, kp, keys) < 0 ||
	    get_number(c, m, kp, "ratio", true, 0, 1e6, false, NULL, r) < 0 ||
	    parse_ci(c, m, kp, "ci95", &have, lo, hi, 1e6) < 0)
		return -1;
	*has = true;
	return 0;
}

/* "tries": the user's own configurations (--try). Their env is checked as strictly as
 * best's: an off-space try may be the best, and its values came from the command line. */
static int parse_tries(const struct ctx *c, const cJSON *root, struct summary *s)
{
	static const char *const keys[] = { "env", "in_space", "outcome", "objective_us",
		"ci95_us", "repeats", "ratio_vs_baseline", "tuned_vs_try", NULL };
	const cJSON *m;
	size_t i = 0;
	char p[PATH_KEY_MAX], ep[PATH_KEY_MAX];

	if (member(c, root, "", "tries", false, false, &m) < 0 || !m)
		return 0;
	if (want_array(c, m, "tries", 64) < 0)
		return -1;
	if (cJSON_GetArraySize(m) == 0)
		return 0;
	s->tries = calloc((size_t)cJSON_GetArraySize(m), sizeof(s->tries[0]));
	if (!s->tries)
		return fail(c, "tries", "out of memory");
	for (const cJSON *e = m->child; e; e = e->next, i++) {
		struct summary_try *t = &s->tries[i];
		const cJSON *env, *b;
		bool have;
		double d;

		join_index(p, sizeof(p), "tries", i);
		s->ntries = i + 1;
		if (want_object(c, e, p) < 0 || check_keys(c, e, p, keys) < 0)
			return -1;
		if (member(c, e, p, "env", true, false, &env) < 0)
			return -1;
		join(ep, sizeof(ep), p, "env");
		if (parse_env(c, env, ep, ENV_STRICT, &t->m.env) < 0)
			return -1;
		if (member(c, e, p, "in_space", false, false, &b) < 0)
			return -1;
		if (b && !cJSON_IsBool(b)) {
			join(ep, sizeof(ep), p, "in_space");
			return fail(c, ep, "expected true or false, got %s", type_name(b));
		}
		t->in_space = cJSON_IsTrue(b);
		if (get_string(c, e, p, "outcome", true, 16, &t->outcome) < 0)
			return -1;
		for (const char *q = t->outcome; *q; q++)
			if (!(islower((unsigned char)*q) || *q == '_'))
				return fail(c, p, "outcome must be a lower-case word");
		if (get_number(c, e, p, "objective_us", false, 0, OBJECTIVE_MAX, false, &have,
		               &t->m.objective_us) < 0)
			return -1;
		t->m.present = have;
		if (parse_ci(c, e, p, "ci95_us", &t->m.has_ci, &t->m.ci_lo, &t->m.ci_hi,
		             OBJECTIVE_MAX) < 0)
			return -1;
		if (get_number(c, e, p, "repeats", false, 0, 1000000, true, &have, &d) < 0)
			return -1;
		t->m.repeats = have ? (int)d : 0;
		if (parse_try_ratio(c, e, p, "ratio_vs_baseline", &t->has_ratio, &t->ratio,
		                    &t->ratio_lo, &t->ratio_hi) < 0 ||
		    parse_try_ratio(c, e, p, "tuned_vs_try", &t->has_tuned, &t->tuned, &t->tuned_lo,
		                    &t->tuned_hi) < 0)
			return -1;
	}
	return 0;
}

static int parse_failures(const struct ctx *c, const cJSON *root, struct summary *s)
{
	static const char *const keys[] = { "env", "stage", "count", NULL };
	const cJSON *m;
	size_t i = 0;
	char p[PATH_KEY_MAX], ep[PATH_KEY_MAX];

	if (member(c, root, "", "failures", false, true, &m) < 0 || !m)
		return 0;
	if (want_array(c, m, "failures", 100000) < 0)
		return -1;
	if (cJSON_GetArraySize(m) == 0)
		return 0;
	s->failures = calloc((size_t)cJSON_GetArraySize(m), sizeof(s->failures[0]));
	if (!s->failures)
		return fail(c, "failures", "out of memory");
	for (const cJSON *e = m->child; e; e = e->next, i++) {
		struct summary_failure *f = &s->failures[i];
		const cJSON *env;
		double d;

		join_index(p, sizeof(p), "failures", i);
		s->nfailures = i + 1;
		if (want_object(c, e, p) < 0 || check_keys(c, e, p, keys) < 0)
			return -1;
		if (member(c, e, p, "env", true, false, &env) < 0)
			return -1;
		join(ep, sizeof(ep), p, "env");
		if (parse_env(c, env, ep, ENV_LENIENT, &f->env) < 0)
			return -1;
		if (get_string(c, e, p, "stage", true, 16, &f->stage) < 0)
			return -1;
		for (const char *q = f->stage; *q; q++)
			if (!(islower((unsigned char)*q) || *q == '_'))
				return fail(c, p, "stage must be a lower-case word");
		if (get_number(c, e, p, "count", true, 1, 1e9, true, NULL, &d) < 0)
			return -1;
		f->count = (long)d;
	}
	return 0;
}

static int parse_pruned(const struct ctx *c, const cJSON *root, struct summary *s)
{
	static const char *const keys[] = { "when", "reason", NULL };
	const cJSON *m;
	size_t i = 0;
	char p[PATH_KEY_MAX], wp[PATH_KEY_MAX];

	if (member(c, root, "", "pruned", false, true, &m) < 0 || !m)
		return 0;
	if (want_array(c, m, "pruned", 100000) < 0)
		return -1;
	if (cJSON_GetArraySize(m) == 0)
		return 0;
	s->pruned = calloc((size_t)cJSON_GetArraySize(m), sizeof(s->pruned[0]));
	if (!s->pruned)
		return fail(c, "pruned", "out of memory");
	for (const cJSON *e = m->child; e; e = e->next, i++) {
		const cJSON *when;

		join_index(p, sizeof(p), "pruned", i);
		s->npruned = i + 1;
		if (want_object(c, e, p) < 0 || check_keys(c, e, p, keys) < 0)
			return -1;
		if (member(c, e, p, "when", true, false, &when) < 0)
			return -1;
		join(wp, sizeof(wp), p, "when");
		if (parse_env(c, when, wp, ENV_WHEN, &s->pruned[i].when) < 0)
			return -1;
		if (get_string(c, e, p, "reason", true, 1024, &s->pruned[i].reason) < 0)
			return -1;
	}
	return 0;
}

static int parse_root(const struct ctx *c, const cJSON *root, struct summary *s)
{
	static const char *const keys[] = { "schema", "tool", "created", "fingerprint", "source",
		"model", "workload", "strategy", "seed", "budget", "pinned", "baseline", "best",
		"gain", "noise", "top", "evaluations", "failures", "pruned", "tries", NULL };
	static const char *const noise_keys[] = { "run_sd", "configs", "dof", NULL };
	static const char *const tool_keys[] = { "name", "version", NULL };
	static const char *const gain_keys[] = { "ratio", "ci95", NULL };
	const cJSON *m;
	const char *schema;
	double d;
	bool have;

	if (want_object(c, root, "") < 0)
		return fail(c, NULL, "expected a JSON object at the top level");
	if (check_keys(c, root, "", keys) < 0)
		return -1;
	if (get_string(c, root, "", "schema", true, 64, &schema) < 0)
		return -1;
	if (strcmp(schema, "nccltune-result/1") != 0)
		return fail(c, "schema", "expected \"nccltune-result/1\"");
	if (member(c, root, "", "tool", false, true, &m) < 0)
		return -1;
	if (m) {
		if (want_object(c, m, "tool") < 0 || check_keys(c, m, "tool", tool_keys) < 0 ||
		    get_string(c, m, "tool", "name", false, 64, &s->tool_name) < 0 ||
		    get_string(c, m, "tool", "version", false, 64, &s->tool_version) < 0)
			return -1;
	}
	if (get_string(c, root, "", "created", false, 64, &s->created) < 0)
		return -1;
	if (member(c, root, "", "fingerprint", true, true, &m) < 0)
		return -1;
	if (m) {
		char where[4200];

		cut(where, sizeof(where), "%s: fingerprint", c->origin);
		if (summary_fingerprint_parse(m, where, &s->fp, c->err, c->errlen) < 0)
			return -1;
	}
	if (get_string(c, root, "", "source", true, 16, &s->source) < 0)
		return -1;
	if (strcmp(s->source, "measured") != 0 && strcmp(s->source, "model") != 0)
		return fail(c, "source", "expected \"measured\" or \"model\"");
	if (get_string(c, root, "", "model", false, 64, &s->model) < 0)
		return -1;
	if (strcmp(s->source, "model") == 0 && !s->model)
		return fail(c, "model", "missing (source is \"model\": the model's name is required)");
	if (strcmp(s->source, "measured") == 0)
		s->model = NULL;
	if (member(c, root, "", "workload", true, false, &m) < 0 || parse_workload(c, m, &s->workload) < 0)
		return -1;
	if (get_string(c, root, "", "strategy", false, 32, &s->strategy) < 0)
		return -1;
	if (get_number(c, root, "", "seed", false, 0, 18446744073709551615.0, true, &s->has_seed,
	               &s->seed) < 0)
		return -1;
	if (get_number(c, root, "", "budget", false, 0, 1e9, true, &have, &d) < 0)
		return -1;
	s->budget = have ? (long)d : -1;
	if (member(c, root, "", "pinned", false, true, &m) < 0)
		return -1;
	if (m && parse_env(c, m, "pinned", ENV_LENIENT, &s->pinned) < 0)
		return -1;
	if (member(c, root, "", "baseline", true, true, &m) < 0)
		return -1;
	if (m && parse_measure(c, m, "baseline", ENV_LENIENT, &s->baseline) < 0)
		return -1;
	if (member(c, root, "", "best", true, true, &m) < 0)
		return -1;
	if (m) {
		if (parse_measure(c, m, "best", ENV_STRICT, &s->best) < 0 || parse_per_size(c, m, s) < 0)
			return -1;
	}
	s->gain_lo = s->gain_hi = NAN;
	if (member(c, root, "", "gain", false, true, &m) < 0)
		return -1;
	if (m) {
		if (want_object(c, m, "gain") < 0 || check_keys(c, m, "gain", gain_keys) < 0)
			return -1;
		if (get_number(c, m, "gain", "ratio", true, 0, 1e6, false, NULL, &s->gain) < 0)
			return -1;
		if (parse_ci(c, m, "gain", "ci95", &have, &s->gain_lo, &s->gain_hi, 1e6) < 0)
			return -1;
		s->has_gain = true;
	}
	/* optional: results.json files written before nccltune recorded it have none */
	if (member(c, root, "", "noise", false, true, &m) < 0)
		return -1;
	if (m) {
		if (want_object(c, m, "noise") < 0 || check_keys(c, m, "noise", noise_keys) < 0 ||
		    get_number(c, m, "noise", "run_sd", true, 0, 10, false, NULL, &s->noise_sd) < 0 ||
		    get_number(c, m, "noise", "configs", true, 1, 1e6, true, NULL, &d) < 0)
			return -1;
		s->noise_configs = (long)d;
		if (get_number(c, m, "noise", "dof", true, 2, 1e9, true, NULL, &d) < 0)
			return -1;
		s->noise_dof = (long)d;
		s->has_noise = true;
	}
	if (parse_top(c, root, s) < 0)
		return -1;
	if (get_number(c, root, "", "evaluations", true, 0, 1e9, true, NULL, &d) < 0)
		return -1;
	s->evaluations = (long)d;
	if (parse_failures(c, root, s) < 0 || parse_pruned(c, root, s) < 0 ||
	    parse_tries(c, root, s) < 0)
		return -1;
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
	struct ctx c;
	const char *end = NULL;

	*out = NULL;
	s = summary_new();
	if (!s)
		return fs_errf(err, errlen, "%s: out of memory", origin);
	cut(s->origin, sizeof(s->origin), "%s", origin);
	c.origin = s->origin;
	c.err = err;
	c.errlen = errlen;
	if (memchr(text, '\0', len)) {
		fail(&c, NULL, "NUL byte in the file: not JSON text");
		goto fail;
	}
	s->doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!s->doc) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = (at && at >= text && at <= text + len) ? (size_t)(at - text) : len;

		fail(&c, NULL, "not valid JSON (truncated or corrupt near byte %zu)", off);
		goto fail;
	}
	for (; end && end < text + len; end++) {
		if (!isspace((unsigned char)*end)) {
			fail(&c, NULL, "trailing data after the JSON object");
			goto fail;
		}
	}
	if (parse_root(&c, s->doc, s) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	summary_destroy(s);
	return -1;
}

/* ---- journal.jsonl ---- */

struct jvisit {
	struct summary *s;
	struct ctx c;
	size_t cap;
};

static int take_argv(struct jvisit *v, const cJSON *probe, const char *p)
{
	size_t n = 0, i = 0;
	char **argv;

	if (want_array(&v->c, probe, p, 256) < 0)
		return -1;
	n = (size_t)cJSON_GetArraySize(probe);
	if (n == 0)
		return fail(&v->c, p, "empty command");
	argv = calloc(n + 1, sizeof(argv[0]));
	if (!argv)
		return fail(&v->c, p, "out of memory");
	v->s->probe_argv = argv;
	for (const cJSON *a = probe->child; a; a = a->next, i++) {
		if (!cJSON_IsString(a) || !a->valuestring || has_control(a->valuestring))
			return fail(&v->c, p, "argument %zu is not a plain string", i);
		argv[i] = strdup(a->valuestring);
		if (!argv[i])
			return fail(&v->c, p, "out of memory");
	}
	return 0;
}

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

static int visit_header(struct jvisit *v, const cJSON *rec, const char *lp)
{
	struct summary *s = v->s;
	const cJSON *m;
	char p[PATH_KEY_MAX];

	if (member(&v->c, rec, lp, "probe", false, true, &m) < 0)
		return -1;
	join(p, sizeof(p), lp, "probe");
	if (m && !s->probe_argv && take_argv(v, m, p) < 0)
		return -1;
	if (!s->fp.present) {
		if (member(&v->c, rec, lp, "fingerprint", false, true, &m) < 0)
			return -1;
		if (m) {
			char where[4400];
			cJSON *dup = keep(s, m);

			if (!dup)
				return fail(&v->c, lp, "out of memory");
			cut(where, sizeof(where), "%s: %s.fingerprint", v->c.origin, lp);
			if (summary_fingerprint_parse(dup, where, &s->fp, v->c.err, v->c.errlen) < 0)
				return -1;
		}
	}
	return 0;
}

static int visit_run(struct jvisit *v, const cJSON *rec, const char *lp)
{
	struct summary *s = v->s;
	struct summary_run *r;
	const cJSON *m;
	const char *str;
	double d;
	char p[PATH_KEY_MAX];

	if (s->nruns == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 64;
		struct summary_run *nr = realloc(s->runs, ncap * sizeof(nr[0]));

		if (!nr)
			return fail(&v->c, lp, "out of memory");
		s->runs = nr;
		v->cap = ncap;
	}
	r = &s->runs[s->nruns];
	memset(r, 0, sizeof(*r));
	r->objective_us = NAN;
	if (get_number(&v->c, rec, lp, "run", true, 0, 1e9, true, NULL, &d) < 0)
		return -1;
	r->run = (long)d;
	if (get_string(&v->c, rec, lp, "phase", true, sizeof(r->phase) - 1, &str) < 0)
		return -1;
	snprintf(r->phase, sizeof(r->phase), "%s", str);
	if (get_string(&v->c, rec, lp, "outcome", true, sizeof(r->outcome) - 1, &str) < 0)
		return -1;
	snprintf(r->outcome, sizeof(r->outcome), "%s", str);
	if (get_number(&v->c, rec, lp, "objective_us", false, 0, OBJECTIVE_MAX, false, NULL,
	               &r->objective_us) < 0)
		return -1;
	if (strcmp(r->outcome, "ok") != 0)
		r->objective_us = NAN;
	if (member(&v->c, rec, lp, "env", true, false, &m) < 0)
		return -1;
	s->nruns++;   /* counted before the env so that destroy frees what was parsed */
	join(p, sizeof(p), lp, "env");
	if (want_object(&v->c, m, p) < 0)
		return -1;
	m = keep(s, m);
	if (!m)
		return fail(&v->c, lp, "out of memory");
	return parse_env(&v->c, m, p, ENV_LENIENT, &r->env);
}

static int journal_visit(void *ctx, const cJSON *rec, size_t line)
{
	struct jvisit *v = ctx;
	const char *type;
	char lp[64];

	snprintf(lp, sizeof(lp), "line %zu", line);
	if (!cJSON_IsObject(rec))
		return fail(&v->c, lp, "a record must be an object");
	if (check_keys(&v->c, rec, lp, NULL) < 0 ||
	    get_string(&v->c, rec, lp, "type", true, 32, &type) < 0)
		return -1;
	if (strcmp(type, "session") == 0)
		return visit_header(v, rec, lp);
	if (strcmp(type, "run") == 0)
		return visit_run(v, rec, lp);
	return 0;   /* record types added later: nothing for a report here */
}

int summary_read_journal(struct summary *s, const char *path, char *err, size_t errlen)
{
	struct jvisit v;
	char jerr[1024] = "";
	int rc;

	memset(&v, 0, sizeof(v));
	v.s = s;
	v.c.origin = path;
	v.c.err = err;
	v.c.errlen = errlen;
	if (err && errlen)
		err[0] = '\0';
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

static void env_free(struct summary_env *env);

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

static void env_free(struct summary_env *env)
{
	free(env->v);
	env->v = NULL;
	env->n = 0;
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
