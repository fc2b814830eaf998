/* read.c - what the readers of a session folder share (see result/read.h): the three
 * kinds of environment (exportable, shown, a pruned rule's levels) and the fingerprint,
 * read through common/jsonread; names and values checked with common/ncclvars. */
#include "result/read.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ncclvars.h"
#include "run/profile.h"
#include "space/space.h"
#include "proto.h"

#define LENIENT_VALUE_MAX 1024   /* values only shown (pinned, failures): longer refused */
#define GPUS_MAX 1024            /* GPUs in a fingerprint */

int summary_read_under(struct jr *r, const char *key, jr_handler fn, const cJSON *v,
                       void *dst)
{
	int rc = jr_push_key(r, key);

	if (rc == 0) {
		rc = fn(r, v, dst);
		jr_pop(r);
	}
	return rc;
}

/* ---- environments ---- */

struct env_ctx { struct summary_env *env; enum summary_env_check mode; };

/* Values that can be exported are checked by ncclvars (which names control characters
 * and lengths itself); values only shown are short plain strings; a pruned rule's
 * levels may also be null, the variable unset. */
static const struct jr_field env_value[] = {
	[SUMMARY_ENV_STRICT] = {"", JR_STRING, JR_CONTROL, 0, 1 << 20, NULL, JR_KEEP, 0, 0, NULL},
	[SUMMARY_ENV_LENIENT] = {"", JR_STRING, 0, 0, LENIENT_VALUE_MAX, NULL, JR_KEEP, 0, 0, NULL},
	[SUMMARY_ENV_WHEN] = {"", JR_STRING | JR_NULL, 0, 0, LENIENT_VALUE_MAX, NULL, JR_KEEP, 0, 0,
	              NULL},
	[SUMMARY_ENV_SERVER] = {"", JR_STRING, 0, 0, LENIENT_VALUE_MAX, NULL, JR_KEEP, 0, 0, NULL},
};

static int take_var(struct jr *r, const char *name, const cJSON *v, void *ctx)
{
	struct env_ctx *e = ctx;
	char why[256], q[80];
	uint64_t bytes;
	enum space_rule_kind kind;

	/* a pruned rule may name a per-size choice (the space's rule.<bytes>.<kind>) or a
	 * server option (null or "on"), never exported */
	if (e->mode == SUMMARY_ENV_WHEN && space_rule_named(name)) {
		if (space_rule_name_parse(name, &bytes, &kind, why, sizeof(why)) < 0)
			return jr_fail(r, "%s", why);
	} else if (e->mode == SUMMARY_ENV_WHEN && space_server_named(name)) {
		if (!cJSON_IsNull(v) && !(cJSON_IsString(v) && strcmp(v->valuestring, SPACE_SYMMETRIC_ON) == 0))
			return jr_fail(r, "%s is null or \"%s\"", SPACE_SYMMETRIC, SPACE_SYMMETRIC_ON);
	} else if (e->mode != SUMMARY_ENV_SERVER && ncclvars_name_check(name, why, sizeof(why)) < 0) {
		return jr_fail(r, "%s", why);
	}
	if (jr_check(r, v, &env_value[e->mode], NULL) < 0)
		return -1;
	/* what a server sets: the profile's own rule (run/profile.h), shown, never exported */
	if (e->mode == SUMMARY_ENV_SERVER &&
	    profile_var_check(name, v->valuestring, why, sizeof(why)) < 0)
		return jr_fail(r, "%s", why);
	if (e->mode == SUMMARY_ENV_STRICT && ncclvars_check(name, v->valuestring, why, sizeof(why)) < 0)
		return jr_fail(r, "value %s refused: %s", jr_quote(v->valuestring, q, sizeof(q)), why);
	e->env->v[e->env->n].name = name;
	e->env->v[e->env->n].value = cJSON_IsNull(v) ? NULL : v->valuestring;
	e->env->n++;
	return 0;
}

/* An object of NCCL_* names to values, in `mode`; env->v is malloc'd. */
static int parse_env(struct jr *r, const cJSON *obj, enum summary_env_check mode,
                     struct summary_env *env)
{
	struct env_ctx e = {env, mode};
	size_t n = (size_t)cJSON_GetArraySize(obj);

	env->n = 0;
	env->v = NULL;
	if (cJSON_IsObject(obj) && n > 0 && n <= SUMMARY_ENV_MAX) {
		env->v = calloc(n, sizeof(env->v[0]));
		if (!env->v)
			return jr_fail(r, "out of memory");
	}
	return jr_map(r, obj, SUMMARY_ENV_MAX, take_var, &e);
}

int summary_read_env_lenient(struct jr *r, const cJSON *v, void *dst)
{
	return parse_env(r, v, SUMMARY_ENV_LENIENT, dst);
}

int summary_read_env_strict(struct jr *r, const cJSON *v, void *dst)
{
	return parse_env(r, v, SUMMARY_ENV_STRICT, dst);
}

/* What a server sets (run/profile.h's rule for each name and value). */
static int read_env_server(struct jr *r, const cJSON *v, void *dst)
{
	return parse_env(r, v, SUMMARY_ENV_SERVER, dst);
}

int summary_read_env_when(struct jr *r, const cJSON *v, void *dst)
{
	return parse_env(r, v, SUMMARY_ENV_WHEN, dst);
}

/* ---- server (--like) ---- */

static int take_server_env(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	return read_env_server(r, v, &s->server_env);
}

static const struct jr_field server_fields[] = {
	{"like", JR_STRING, JR_REQUIRED, 0, 31, NULL, JR_STR, offsetof(struct summary, server_like), 0, NULL},
	{"env", JR_OBJECT, JR_REQUIRED, 0, SUMMARY_ENV_MAX, NULL, JR_KEEP, 0, 0, take_server_env},
	JR_END,
};

/* "server": {"like": NAME, "env": {...}} (--like): shown and written as comments only. */
int summary_read_server(struct jr *r, const cJSON *v, void *dst)
{
	return jr_dispatch(r, v, server_fields, false, dst, NULL);
}

/* ---- a measure's step, the best's server options ---- */

struct step_read { double allreduce, kernel; };

static const char *const step_kernels[] = {"measured", NULL};
static const struct jr_field step_fields[] = {
	{"allreduce_us", JR_NUMBER, JR_REQUIRED, 0, 1e12, NULL, JR_DOUBLE,
	 offsetof(struct step_read, allreduce), 0, NULL},
	{"kernel_us", JR_NUMBER, JR_REQUIRED, 0, 1e12, NULL, JR_DOUBLE,
	 offsetof(struct step_read, kernel), 0, NULL},
	{"kernel", JR_STRING, JR_REQUIRED, 0, 16, step_kernels, JR_KEEP, 0, 0, NULL},
	JR_END,
};

static int read_step(struct jr *r, const cJSON *v, void *dst)
{
	struct summary_measure *m = dst;
	struct step_read in = {0, 0};

	if (jr_dispatch(r, v, step_fields, false, &in, NULL) < 0)
		return -1;
	m->has_step = true;
	m->step_allreduce_us = in.allreduce;
	m->step_kernel_us = in.kernel;
	return 0;
}

static const char *const kernel_words[] = {"symmetric", "not symmetric", "unknown", NULL};

static int take_symmetric(struct jr *r, const cJSON *v, void *dst)
{
	if (!cJSON_IsTrue(v))
		return jr_fail(r, "must be true (a configuration without symmetric memory has no "
		               "server)");
	((struct summary_measure *)dst)->symmetric = true;
	return 0;
}

static const struct jr_field best_server_fields[] = {
	{"symmetric", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_KEEP, 0, 0, take_symmetric},
	{"kernel", JR_STRING, 0, 0, 16, kernel_words, JR_STR,
	 offsetof(struct summary_measure, kernel), 0, NULL},
	JR_END,
};

static int read_server_options(struct jr *r, const cJSON *v, void *dst)
{
	return jr_dispatch(r, v, best_server_fields, false, dst, NULL);
}

int summary_read_extras(struct jr *r, const cJSON *step, const cJSON *server,
                        struct summary_measure *m)
{
	if (step && summary_read_under(r, "step", read_step, step, m) < 0)
		return -1;
	return server ? summary_read_under(r, "server", read_server_options, server, m) : 0;
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
	JR_END,
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
	{"nccl_path", JR_STRING | JR_NULL, 0, 0, 4096, NULL, JR_STR, F(nccl_path), 0, NULL},
	{"gpu_count", JR_NUMBER | JR_NULL, JR_INTEGER, 0, GPUS_MAX, NULL, JR_INT, F(gpu_count), 0,
	 NULL},
	{"gpus", JR_ARRAY | JR_NULL, 0, 0, GPUS_MAX, NULL, JR_KEEP, 0, 0, take_gpus},
	{"topology", JR_ARRAY | JR_NULL, 0, 0, GPUS_MAX, NULL, JR_KEEP, 0, 0, take_topology},
	JR_END,
};

int summary_read_fingerprint(struct jr *r, const cJSON *o, struct summary_fingerprint *fp)
{
	memset(fp, 0, sizeof(*fp));
	fp->gpu_count = -1;
	if (jr_dispatch(r, o, fp_fields, true, fp, NULL) < 0) {
		summary_fingerprint_clear(fp);
		return -1;
	}
	fp->present = true;
	fp->doc = o;
	return 0;
}

int summary_fingerprint_parse(const cJSON *o, const char *where, struct summary_fingerprint *fp,
                              char *err, size_t errlen)
{
	struct jr r;

	jr_init(&r, where, err, errlen);
	return summary_read_fingerprint(&r, o, fp);
}

int summary_fingerprint_check(const cJSON *o, const char *where, char *err, size_t errlen)
{
	struct summary_fingerprint chk;

	if (summary_fingerprint_parse(o, where, &chk, err, errlen) != 0)
		return -1;
	summary_fingerprint_clear(&chk);
	return 0;
}
