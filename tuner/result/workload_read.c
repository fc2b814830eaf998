/* workload_read.c - results.json "workload" (docs/formats.md), read strictly into the
 * summary's typed workload: the collectives, the guard sizes, the server's step
 * ("compute") and "window". The session's own workload file has its reader in
 * tuner/run/workload.c; this is the result's copy of it, as the session wrote it. */
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"
#include "proto.h"
#include "result/read.h"

#define STRING_MAX 4096          /* free text of results.json */
#define BYTES_MAX 1099511627776.0

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
	JR_END,
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

static const char *const window_words[] = {"symmetric", NULL};

static const struct jr_field guard_size_field = {
	"", JR_NUMBER, JR_INTEGER, 1, BYTES_MAX, NULL, JR_U64, 0, 0, NULL,
};

static int take_guard1(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary_workload *w = ctx;

	w->nguard = i + 1;
	return jr_check(r, v, &guard_size_field, &w->guard[i]) < 0 ? -1 : 0;
}

static int take_guard(struct jr *r, const cJSON *v, void *dst)
{
	struct summary_workload *w = dst;

	if (!v->child)
		return 0;
	w->guard = calloc((size_t)cJSON_GetArraySize(v), sizeof(w->guard[0]));
	if (!w->guard)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, PROTO_MAX_SIZES, take_guard1, w);
}

/* the server's step (--compute-us): {"kernel_us", "ctas"} */
static const struct jr_field compute_fields[] = {
	{"kernel_us", JR_NUMBER, JR_REQUIRED, 0, PROTO_MAX_COMPUTE_US, NULL, JR_DOUBLE,
	 W(compute_kernel_us), 0, NULL},
	{"ctas", JR_NUMBER, JR_INTEGER, 1, PROTO_MAX_COMPUTE_CTAS, NULL, JR_LONG, W(compute_ctas),
	 0, NULL},
	JR_END,
};

static int take_compute(struct jr *r, const cJSON *v, void *dst)
{
	struct summary_workload *w = dst;

	if (jr_dispatch(r, v, compute_fields, false, w, NULL) < 0)
		return -1;
	w->has_compute = true;
	return 0;
}

static int take_window(struct jr *r, const cJSON *v, void *dst)
{
	(void)r;
	(void)v;
	((struct summary_workload *)dst)->window_symmetric = true;
	return 0;
}

static const struct jr_field workload_fields[] = {
	{"schema", JR_STRING | JR_NULL, 0, 0, 64, workload_schema, JR_STR, W(schema), 0, NULL},
	{"dtype", JR_STRING, JR_REQUIRED, 0, 16, dtypes, JR_STR, W(dtype), 0, NULL},
	{"collectives", JR_ARRAY, JR_REQUIRED, 0, PROTO_MAX_SIZES, NULL, JR_KEEP, 0, 0,
	 take_collectives},
	{"iters", JR_NUMBER | JR_NULL, JR_INTEGER, 1, 1e7, NULL, JR_KEEP, 0, 0, NULL},
	{"warmup", JR_NUMBER | JR_NULL, JR_INTEGER, 0, 1e7, NULL, JR_KEEP, 0, 0, NULL},
	{"guard", JR_ARRAY | JR_NULL, 0, 0, PROTO_MAX_SIZES, NULL, JR_KEEP, 0, 0, take_guard},
	{"description", JR_STRING | JR_NULL, 0, 0, STRING_MAX, NULL, JR_STR, W(description), 0,
	 NULL},
	{"compute", JR_OBJECT | JR_NULL, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_compute},
	{"window", JR_STRING | JR_NULL, 0, 0, 0, window_words, JR_KEEP, 0, 0, take_window},
	JR_END,
};

int summary_read_workload(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (jr_dispatch(r, v, workload_fields, false, &s->workload, NULL) < 0)
		return -1;
	s->workload.present = true;
	return 0;
}
