/* final_read.c - what the final phase decided, as results.json says it (docs/formats.md):
 * "per_size" (each tuned and guard size, baseline against best), "guards" (their sizes,
 * the verdict, the attribution) and "ablation" (each variable of the best, kept or
 * dropped, and why), read strictly into the summary's typed fields: the renderers (show,
 * the report, the --json summary) read these, never the document. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"
#include "proto.h"
#include "result/read.h"
#include "result/summary.h"

#define BYTES_MAX 1099511627776.0
#define RATIO_MAX 1e6
#define WHY_MAX 1024

static const char *const roles[] = {"tuned", "guard", NULL};
static const char *const guard_verdicts[] = {"ok", "slower", "not_shown_safe",
                                             "measured_once", "unmeasured", NULL};
static const char *const kinds[] = {"decision", "process", NULL};

/* An array of exactly two ratios, or empty ([] when there is no interval). */
static int read_ci(struct jr *r, const cJSON *v, bool *has, double *lo, double *hi)
{
	static const struct jr_field num = {"", JR_NUMBER, 0, 0, RATIO_MAX, NULL, JR_KEEP, 0, 0,
	                                     NULL};
	int n = cJSON_GetArraySize(v);

	*has = false;
	*lo = *hi = NAN;
	if (n == 0)
		return 0;
	if (n != 2)
		return jr_fail(r, "must be [] or [low, high]");
	if (jr_push_index(r, 0) < 0)
		return -1;
	if (jr_check(r, v->child, &num, NULL) < 0)
		return -1;
	jr_pop(r);
	if (jr_push_index(r, 1) < 0)
		return -1;
	if (jr_check(r, v->child->next, &num, NULL) < 0)
		return -1;
	jr_pop(r);
	*has = true;
	*lo = v->child->valuedouble;
	*hi = v->child->next->valuedouble;
	return 0;
}

/* ---- per_size ---- */

struct size_doc { const char *role; const cJSON *ci; };

#define Z(f) offsetof(struct summary_size_cmp, f)
#define ZD(f) offsetof(struct size_doc, f)

static int take_role(struct jr *r, const cJSON *v, void *dst)
{
	(void)r;
	((struct summary_size_cmp *)dst)->guard = strcmp(v->valuestring, "guard") == 0;
	return 0;
}

static int take_size_ci(struct jr *r, const cJSON *v, void *dst)
{
	struct summary_size_cmp *c = dst;

	return read_ci(r, v, &c->has_ci, &c->ci_lo, &c->ci_hi);
}

static const struct jr_field size_cmp_fields[] = {
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, BYTES_MAX, NULL, JR_U64, Z(bytes), 0,
	 NULL},
	{"role", JR_STRING, JR_REQUIRED, 0, 16, roles, JR_KEEP, 0, 0, take_role},
	{"baseline_us", JR_NUMBER | JR_NULL, 0, 0, 1e12, NULL, JR_DOUBLE, Z(baseline_us), 0, NULL},
	{"best_us", JR_NUMBER | JR_NULL, 0, 0, 1e12, NULL, JR_DOUBLE, Z(best_us), 0, NULL},
	{"ratio", JR_NUMBER | JR_NULL, 0, 0, RATIO_MAX, NULL, JR_DOUBLE, Z(ratio), 0, NULL},
	{"ratio_ci95", JR_ARRAY, 0, 0, 2, NULL, JR_KEEP, 0, 0, take_size_ci},
	JR_END,
};

static int take_size_cmp(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct summary_size_cmp *c = &s->per_size[i];

	c->baseline_us = c->best_us = c->ratio = c->ci_lo = c->ci_hi = NAN;
	s->nper_size = i + 1;
	return jr_dispatch(r, v, size_cmp_fields, false, c, NULL);
}

int summary_read_per_size(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->per_size = calloc((size_t)cJSON_GetArraySize(v), sizeof *s->per_size);
	if (!s->per_size)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 2 * PROTO_MAX_SIZES, take_size_cmp, s);
}

/* ---- {"ratio", "ci95"} ---- */

static int take_ratio_ci(struct jr *r, const cJSON *v, void *dst)
{
	struct summary_ratio *x = dst;

	return read_ci(r, v, &x->has_ci, &x->lo, &x->hi);
}

static const struct jr_field ratio_fields[] = {
	{"ratio", JR_NUMBER, JR_REQUIRED, 0, RATIO_MAX, NULL, JR_DOUBLE,
	 offsetof(struct summary_ratio, ratio), 0, NULL},
	{"ci95", JR_ARRAY, 0, 0, 2, NULL, JR_KEEP, 0, 0, take_ratio_ci},
	JR_END,
};

static int take_ratio(struct jr *r, const cJSON *v, void *dst)
{
	return jr_dispatch(r, v, ratio_fields, false, dst, NULL);
}

/* ---- guards ---- */

#define T(f) offsetof(struct summary_attribution, f)

static int take_attr_env(struct jr *r, const cJSON *v, void *dst)
{
	return summary_read_env_strict(r, v, &((struct summary_attribution *)dst)->env);
}

static int take_cost(struct jr *r, const cJSON *v, void *dst)
{
	return take_ratio(r, v, &((struct summary_attribution *)dst)->cost);
}

static const struct jr_field attribution_fields[] = {
	{"env", JR_OBJECT, JR_REQUIRED, 0, SUMMARY_ENV_MAX, NULL, JR_KEEP, 0, 0, take_attr_env},
	{"var", JR_STRING, JR_REQUIRED, 0, 128, NULL, JR_STR, T(var), 0, NULL},
	{"value", JR_STRING, JR_REQUIRED, 0, 256, NULL, JR_STR, T(value), 0, NULL},
	{"bytes", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 1, BYTES_MAX, NULL, JR_U64, T(bytes), 0,
	 NULL},
	{"rounds", JR_NUMBER, JR_REQUIRED | JR_INTEGER, 0, 1e6, NULL, JR_LONG, T(rounds), 0, NULL},
	{"cost", JR_OBJECT, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_cost},
	JR_END,
};

static int take_attribution1(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct summary_attribution *a = &s->attribution[i];

	a->cost.ratio = a->cost.lo = a->cost.hi = NAN;
	s->nattribution = i + 1;
	return jr_dispatch(r, v, attribution_fields, false, a, NULL);
}

static int take_attribution(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->attribution = calloc((size_t)cJSON_GetArraySize(v), sizeof *s->attribution);
	if (!s->attribution)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 64, take_attribution1, s);
}

static const struct jr_field guard_size_field = {
	"", JR_NUMBER, 0, 1, BYTES_MAX, NULL, JR_KEEP, 0, 0, NULL,
};

static int take_guard_size(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;

	if (jr_check(r, v, &guard_size_field, NULL) < 0)
		return -1;
	if (v->valuedouble != floor(v->valuedouble))
		return jr_fail(r, "must be an integer");
	s->guard_sizes[i] = (uint64_t)v->valuedouble;
	s->nguard_sizes = i + 1;
	return 0;
}

static int take_guard_sizes(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->guard_sizes = calloc((size_t)cJSON_GetArraySize(v), sizeof *s->guard_sizes);
	if (!s->guard_sizes)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, PROTO_MAX_SIZES, take_guard_size, s);
}

static const struct jr_field guards_fields[] = {
	{"sizes", JR_ARRAY, JR_REQUIRED, 0, PROTO_MAX_SIZES, NULL, JR_KEEP, 0, 0,
	 take_guard_sizes},
	{"verdict", JR_STRING, JR_REQUIRED, 0, 16, guard_verdicts, JR_STR,
	 offsetof(struct summary, guards_verdict), 0, NULL},
	{"attribution", JR_ARRAY, 0, 0, 64, NULL, JR_KEEP, 0, 0, take_attribution},
	JR_END,
};

int summary_read_guards(struct jr *r, const cJSON *v, void *dst)
{
	return jr_dispatch(r, v, guards_fields, false, dst, NULL);
}

/* ---- ablation ---- */

#define A(f) offsetof(struct summary_ablation, f)

static int take_removed(struct jr *r, const cJSON *v, void *dst)
{
	return take_ratio(r, v, &((struct summary_ablation *)dst)->removed);
}

static const struct jr_field ablation_fields[] = {
	{"var", JR_STRING, JR_REQUIRED, 0, 128, NULL, JR_STR, A(var), 0, NULL},
	{"value", JR_STRING, JR_REQUIRED, 0, 256, NULL, JR_STR, A(value), 0, NULL},
	{"kind", JR_STRING, JR_REQUIRED, 0, 16, kinds, JR_STR, A(kind), 0, NULL},
	{"dropped", JR_BOOL, JR_REQUIRED, 0, 0, NULL, JR_BOOLEAN, A(dropped), 0, NULL},
	{"why", JR_STRING, JR_REQUIRED, 0, WHY_MAX, NULL, JR_STR, A(why), 0, NULL},
	{"run", JR_NUMBER, JR_INTEGER, 1, 1e9, NULL, JR_LONG, A(run), 0, NULL},
	{"removed_vs_kept", JR_OBJECT, 0, 0, 0, NULL, JR_KEEP, 0, 0, take_removed},
	JR_END,
};

static int take_ablation1(struct jr *r, const cJSON *v, size_t i, void *ctx)
{
	struct summary *s = ctx;
	struct summary_ablation *a = &s->ablation[i];

	a->removed.ratio = a->removed.lo = a->removed.hi = NAN;
	s->nablation = i + 1;
	return jr_dispatch(r, v, ablation_fields, false, a, NULL);
}

int summary_read_ablation(struct jr *r, const cJSON *v, void *dst)
{
	struct summary *s = dst;

	if (!v->child)
		return 0;
	s->ablation = calloc((size_t)cJSON_GetArraySize(v), sizeof *s->ablation);
	if (!s->ablation)
		return jr_fail(r, "out of memory");
	return jr_each(r, v, 64, take_ablation1, s);
}

void summary_final_free(struct summary *s)
{
	free(s->per_size);
	free(s->guard_sizes);
	for (size_t i = 0; i < s->nattribution; i++)
		free(s->attribution[i].env.v);
	free(s->attribution);
	free(s->ablation);
}
