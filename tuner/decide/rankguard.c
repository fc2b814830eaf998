/* rankguard.c - the guard-aware order of the candidates for the final rounds (issue 17,
 * issue 30): a candidate whose sweeps measured a guard size beyond
 * DECIDE_GUARD_SWEEP_MARGIN over NCCL's defaults ranks after the others; among the
 * others, ties within DECIDE_TIE_MARGIN of the fastest go closest to NCCL's defaults
 * first, and a candidate that runs NCCL's defaults at every guard size (safe there by
 * identity) goes first of all when it beat the baseline's run or is within
 * DECIDE_IDENTITY_MARGIN of the fastest. The same sweep figures give the outer search
 * its guard penalty (decide_outer_guard_penalty). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decide/decide.h"
#include "decide/decide_impl.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median over the sweeps of p's outer point of the guard size `bytes` under NCCL's
 * own choice (their inner results: own cases at a guard size); NAN when none. */
static double sweep_guard_us(const struct decide_view *v, const struct point *p, uint64_t bytes)
{
	double x[DECIDE_SWEEP_GUARD_MAX];
	size_t n = 0;

	for (size_t i = 0; i < v->log.ninner && n < sizeof x / sizeof x[0]; i++) {
		const struct twolevel_inner *in = &v->log.inner[i];

		if (in->index == TWOLEVEL_OWN && in->bytes == bytes && in->cls == OUTCOME_OK &&
		    in->run < v->log.nruns && twolevel_same_outer(v->log.tl, &in->p, p))
			x[n++] = in->us;
	}
	if (n == 0)
		return NAN;
	qsort(x, n, sizeof x[0], cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* NCCL's defaults at the guard size `bytes`, what the sweeps' guard figures are held
 * against: the median of every measurement of them - the baseline's ok runs and, where
 * an outer point sets nothing, its sweeps' own case there - so that one baseline run
 * measured low does not flag every candidate (issue 30). NAN when none says. */
static double baseline_size_us(const struct decide_view *v, uint64_t bytes)
{
	double x[DECIDE_SWEEP_GUARD_MAX + 8];
	size_t n = 0, cap = sizeof x / sizeof x[0];
	struct point base;

	for (size_t i = 0; i < v->log.nruns && n < cap; i++) {
		const struct session_run *r = &v->log.runs[i];
		const struct proto_size_result *res;

		if ((r->phase != PHASE_BASELINE && r->phase != PHASE_RETRY) || r->has_point ||
		    r->try_no || r->o.cls != OUTCOME_OK)
			continue;
		res = proto_report_size(&r->o.report, bytes);
		if (res && res->us.median > 0)
			x[n++] = res->us.median;
	}
	for (size_t i = 0; v->log.tl && runlog_baseline_point(v->log.sp, &base) &&
	     i < v->log.ninner && n < cap; i++) {
		const struct twolevel_inner *in = &v->log.inner[i];

		if (in->index == TWOLEVEL_OWN && in->bytes == bytes && in->cls == OUTCOME_OK &&
		    in->run < v->log.nruns && in->us > 0 && twolevel_same_outer(v->log.tl, &in->p, &base))
			x[n++] = in->us;
	}
	if (n == 0)
		return NAN;
	qsort(x, n, sizeof x[0], cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

bool decide_defaults_at_guards(const struct decide_view *v, const struct point *p)
{
	for (size_t g = 0; g < v->wl->nguard; g++)
		if (!runlog_defaults_at(v->log.sp, p, 0, v->wl->guard[g]))
			return false;
	return v->wl->nguard > 0;
}

/* The worst guard size of p's outer point in its sweeps against the baseline: the ratio,
 * *bytes the size (NAN and 0: no sweep measured one; 1 and 0: p runs NCCL's defaults at
 * every guard size, so what its sweeps measured there is the baseline again, whatever
 * the process's noise made of it). */
static double worst_sweep_guard(const struct decide_view *v, const struct point *p,
                                size_t *bytes)
{
	double worst = NAN;

	*bytes = 0;
	if (decide_defaults_at_guards(v, p))
		return 1.0;
	for (size_t g = 0; v->log.tl && g < v->wl->nguard; g++) {
		double b = baseline_size_us(v, v->wl->guard[g]);
		double r = sweep_guard_us(v, p, v->wl->guard[g]) / b;

		if (b > 0 && isfinite(r) && !(r <= worst)) {
			worst = r;
			*bytes = v->wl->guard[g];
		}
	}
	return worst;
}

static void sweep_guard_of(const struct decide_view *v, struct finalist *x)
{
	x->sweep_guard_ratio = NAN;
	x->sweep_guard_bytes = 0;
	if (x->has_point)
		x->sweep_guard_ratio = worst_sweep_guard(v, &x->p, &x->sweep_guard_bytes);
}

double decide_outer_guard_penalty(const struct decide_view *v, const struct point *full,
                                  double *ratio, size_t *bytes)
{
	double r = v->wl->nguard ? worst_sweep_guard(v, full, bytes) : NAN;

	*ratio = r;
	if (!(r > 1 + DECIDE_GUARD_SWEEP_MARGIN))
		return 1.0;
	return pow(r / (1 + DECIDE_GUARD_SWEEP_MARGIN), DECIDE_GUARD_PENALTY_POWER);
}

/* Did x's sweeps measure a guard size beyond what the final rounds let pass? */
static bool guard_risky(const struct finalist *x)
{
	return isfinite(x->sweep_guard_ratio) && x->sweep_guard_ratio > 1 + DECIDE_GUARD_SWEEP_MARGIN;
}

/* How many process-level variables p sets (a level other than unset). */
static size_t vars_set(const struct decide_view *v, const struct point *p)
{
	size_t n = 0;

	for (size_t d = 0; d < space_dims(v->log.sp); d++)
		n += space_rule_of(v->log.sp, d, NULL) == SPACE_RULE_NONE &&
		     space_level_text(v->log.sp, d, p->lv[d]) != NULL;
	return n;
}

/* Is a closer to NCCL's defaults than b: a lower guard ratio in the sweeps when both
 * were measured there, else fewer process-level variables set? */
static bool closer_to_defaults(const struct decide_view *v, const struct finalist *a,
                               const struct finalist *b)
{
	if (isfinite(a->sweep_guard_ratio) && isfinite(b->sweep_guard_ratio))
		return a->sweep_guard_ratio < b->sweep_guard_ratio;
	return a->has_point && b->has_point && vars_set(v, &a->p) < vars_set(v, &b->p);
}

/* Note a candidate the guards moved out of the finalists' places. */
static void note_risky(const struct decide_view *v, const struct finalist *x)
{
	char d[512];

	if (!v->replaying)
		decide_note(v, "final: %s measured the guard size %zu B at %.2fx the "
		             "baseline in its sweep (limit %.2fx): ranked after the candidates "
		             "that pass the guards", space_point_describe(v->log.sp, &x->p, d,
		             sizeof d), x->sweep_guard_bytes, x->sweep_guard_ratio,
		             1 + DECIDE_GUARD_SWEEP_MARGIN);
}

/* Move the first candidate that runs NCCL's defaults at every guard size to the front,
 * with a note, when it is within DECIDE_IDENTITY_MARGIN of the fastest that passes the
 * guards in its sweeps (`best`) or faster than the baseline's run: its guards need no
 * proof (rounds that cannot show a guard within DECIDE_GUARD_ALLOWED on a noisy machine
 * would refuse the others), and the fastest single sweep among dozens is measured low
 * by the winner's curse, so a margin alone left it out of the finalists (issue 30). */
static void identity_first(const struct decide_view *v, struct final_state *f, double best)
{
	const struct outcome *b = runlog_baseline_outcome(&v->log);
	double base = b && b->cls == OUTCOME_OK ? b->objective_us : NAN;
	char d[512];

	for (size_t j = 0; j < f->nc; j++) {
		struct finalist x = f->c[j];

		if (!x.has_point || !decide_defaults_at_guards(v, &x.p) || guard_risky(&x) ||
		    !(x.search_us <= best * (1 + DECIDE_IDENTITY_MARGIN) || x.search_us < base))
			continue;
		if (j == 0)
			return;
		memmove(&f->c[1], &f->c[0], j * sizeof *f->c);
		f->c[0] = x;
		if (!v->replaying)
			decide_note(v, "final: %s runs NCCL's defaults at every guard size and %s "
			            "(%.0f%% margin): first finalist",
			            space_point_describe(v->log.sp, &x.p, d, sizeof d),
			            x.search_us <= best * (1 + DECIDE_IDENTITY_MARGIN)
			            ? "is within the margin of the fastest" : "was faster than the "
			            "baseline, though not within the margin of the fastest",
			            100 * DECIDE_IDENTITY_MARGIN);
		return;
	}
}

/* Reorder f->c for the guards: first the candidates within DECIDE_TIE_MARGIN of the
 * fastest that passes the guards in its sweeps (closest to NCCL's defaults first), then
 * the other passing ones, then those a guard size would refuse (each in the order it
 * had); then identity_first. A session without sweep guard figures (one level) keeps
 * its order but for the ties. Returns 0 or -1 (f->err). */
static int rank_by_guards(const struct decide_view *v, struct final_state *f)
{
	struct finalist *sorted = calloc(f->nc ? f->nc : 1, sizeof *sorted);
	double best = INFINITY;
	size_t n = 0;

	if (!sorted)
		return decide_fail(f, "out of memory ranking the finalists");
	for (size_t j = 0; j < f->nc; j++) {
		sweep_guard_of(v, &f->c[j]);
		if (!guard_risky(&f->c[j]) && f->c[j].search_us < best)
			best = f->c[j].search_us;
	}
	for (size_t j = 0; j < f->nc; j++) {
		size_t at = n;

		if (guard_risky(&f->c[j]) || !(f->c[j].search_us <= best * (1 + DECIDE_TIE_MARGIN)))
			continue;
		while (at > 0 && closer_to_defaults(v, &f->c[j], &sorted[at - 1]))
			at--;   /* stable insertion: ties keep their order */
		memmove(&sorted[at + 1], &sorted[at], (n - at) * sizeof *sorted);
		sorted[at] = f->c[j];
		n++;
	}
	for (size_t j = 0; j < f->nc; j++)
		if (!guard_risky(&f->c[j]) && !(f->c[j].search_us <= best * (1 + DECIDE_TIE_MARGIN)))
			sorted[n++] = f->c[j];
	for (size_t j = 0; j < f->nc; j++) {
		if (!guard_risky(&f->c[j]))
			continue;
		if (j < DECIDE_FINALISTS)
			note_risky(v, &f->c[j]);
		sorted[n++] = f->c[j];
	}
	memcpy(f->c, sorted, f->nc * sizeof *f->c);
	free(sorted);
	identity_first(v, f, best);
	return 0;
}

int decide_rank_by_guards(const struct decide_view *v, struct final_state *f)
{
	return rank_by_guards(v, f);
}

