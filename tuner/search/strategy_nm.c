/* strategy_nm.c - Nelder-Mead (NLopt LN_NELDERMEAD) over the ordinal parameters, one
 * categorical combination at a time.
 *
 * Combinations. A combination fixes every categorical parameter and, for each ordinal
 * parameter that has an "unset" level, whether it is unset. Nelder-Mead works on the
 * remaining ordinal parameters relaxed to [0, 1] (space_coord), rounded to the nearest
 * level by space_point_round, minimising log(objective).
 *
 * Order. First a scout phase: when there are at most NM_SCOUT_MAX combinations, the
 * rounded centre of each combination not yet observed is run, in index order. Then
 * Nelder-Mead runs go to the combination with the best value seen so far that has had
 * fewer than NM_RUNS_PER_COMBO runs (ties: fewest runs, then index); a run starts at
 * that combination's best point with an initial step of 0.3 halved at each further
 * run there. Combinations pruned by a rule are skipped.
 *
 * Pull interface over a push optimiser: NLopt calls f(x), the session asks
 * suggest(). Each suggestion replays the current run from its start (x0, step) with
 * NLopt, answering every f(x) whose rounded point was observed from the observation
 * log (failures, and points the space or prune refuses, get a finite penalty: the
 * worst log-objective seen when the run began, plus 1). The first rounded point that
 * was never observed is the suggestion: f records it, calls nlopt_force_stop and
 * NLopt returns. Nelder-Mead is deterministic, so the replay retraces the same path
 * and reaches the new point; a rounded point is never run twice, since a cached value
 * answers every repeat. A run that ends (NLopt converges on cached values, or reaches
 * its evaluation cap) without an unobserved point is over and the next run starts.
 * Replays cost O(evaluations) each, negligible next to a probe run. When no run
 * yields a new point, a uniformly random eligible point is proposed. */
#include "search/strategy_impl.h"

#include <math.h>
#include <nlopt.h>
#include <stdlib.h>
#include <string.h>

#define NM_SCOUT_MAX 32
#define NM_RUNS_PER_COMBO 4
#define NM_COMBO_LIST_MAX 4096
#define NM_FIRST_STEP 0.3
#define NM_NO_DATA_PENALTY 50.0
#define NM_RANDOM_TRIES 2000
#define SALT_NM 0x6e656c6465ULL

struct nm_run {
	struct point base;            /* the combination (see combo_base) */
	size_t n;                     /* ordinal dims searched in this combination */
	size_t act[SPACE_MAX_DIMS];
	double x0[SPACE_MAX_DIMS];
	double step, penalty;
};

struct nm {
	size_t ncdims;                /* dims that define a combination */
	size_t cdim[SPACE_MAX_DIMS];
	uint32_t null_level[SPACE_MAX_DIMS];   /* per dim; UINT32_MAX if none */
	uint64_t ncombos;             /* 0 when more than NM_COMBO_LIST_MAX */
	struct pointmap runs;         /* combination -> runs finished */
	bool have_run;
	struct nm_run run;
	gsl_rng *r;
	/* replay state */
	strategy *s;
	nlopt_opt opt;
	bool pending;
	struct point ask;
};

static bool dim_searched(const strategy *s, size_t d)
{
	size_t m = 0;

	for (size_t l = 0; l < space_levels(s->sp, d); l++)
		m += space_level_text(s->sp, d, l) != NULL;
	return !space_is_categorical(s->sp, d) && m >= 2;
}

static int nm_create(strategy *s, char *err, size_t errlen)
{
	struct nm *nm = calloc(1, sizeof *nm);
	uint64_t nc = 1;

	if (!nm)
		goto oom;
	s->impl = nm;
	pointmap_init(&nm->runs, s->dims);
	nm->r = gsl_rng_alloc(gsl_rng_mt19937);
	if (!nm->r)
		goto oom;
	for (size_t d = 0; d < s->dims; d++) {
		nm->null_level[d] = UINT32_MAX;
		for (size_t l = 0; l < space_levels(s->sp, d); l++) {
			if (!space_level_text(s->sp, d, l) && !space_is_categorical(s->sp, d))
				nm->null_level[d] = (uint32_t)l;
		}
		if (space_is_categorical(s->sp, d) || nm->null_level[d] != UINT32_MAX) {
			uint64_t radix = space_is_categorical(s->sp, d) ? space_levels(s->sp, d) : 2;

			nm->cdim[nm->ncdims++] = d;
			nc = nc > NM_COMBO_LIST_MAX ? nc : nc * radix;
		}
	}
	nm->ncombos = nc > NM_COMBO_LIST_MAX ? 0 : nc;
	return 0;
oom:
	snprintf(err, errlen, "out of memory creating strategy nm");
	return -1;
}

static void nm_destroy(strategy *s)
{
	struct nm *nm = s->impl;

	if (!nm)
		return;
	pointmap_free(&nm->runs);
	if (nm->r)
		gsl_rng_free(nm->r);
	free(nm);
}

/* The combination of p as a point: categorical levels and unset levels kept, the
 * other ordinal levels zeroed. */
static void combo_of(const strategy *s, const struct nm *nm, const struct point *p,
                     struct point *base)
{
	memset(base, 0, sizeof *base);
	for (size_t d = 0; d < s->dims; d++) {
		if (space_is_categorical(s->sp, d) || p->lv[d] == nm->null_level[d])
			base->lv[d] = p->lv[d];
	}
}

static void combo_at(const strategy *s, const struct nm *nm, uint64_t index,
                     struct point *base)
{
	memset(base, 0, sizeof *base);
	for (size_t k = nm->ncdims; k-- > 0;) {
		size_t d = nm->cdim[k];
		uint64_t radix = space_is_categorical(s->sp, d) ? space_levels(s->sp, d) : 2;
		uint64_t digit = index % radix;

		index /= radix;
		if (space_is_categorical(s->sp, d))
			base->lv[d] = (uint32_t)digit;
		else if (digit == 1)
			base->lv[d] = nm->null_level[d];
	}
}

static bool combo_pruned(const strategy *s, const struct point *base)
{
	for (size_t i = 0; i < prune_rule_count(s->pr); i++) {
		if (prune_rule_matches(prune_rule_at(s->pr, i), base))
			return true;
	}
	return false;
}

/* Round x (coordinates of the run's searched dims) to a point of the combination. */
static void nm_round(const strategy *s, const struct nm_run *run, const double *x,
                     struct point *out)
{
	double full[SPACE_MAX_DIMS];

	for (size_t d = 0; d < s->dims; d++)
		full[d] = 0.0;
	for (size_t k = 0; k < run->n; k++)
		full[run->act[k]] = x[k];
	space_point_round(s->sp, full, &run->base, out);
	for (size_t d = 0; d < s->dims; d++) {
		if (!space_is_categorical(s->sp, d) && !space_level_text(s->sp, d, run->base.lv[d]))
			out->lv[d] = run->base.lv[d];
	}
}

static double nm_objective(unsigned n, const double *x, double *grad, void *data)
{
	struct nm *nm = data;
	const strategy *s = nm->s;
	const struct strategy_obs *o;
	struct point p;

	(void)n;
	(void)grad;
	nm_round(s, &nm->run, x, &p);
	o = strategy_lookup(s, &p);
	if (o)
		return o->cls == OUTCOME_OK ? o->y : nm->run.penalty;
	if (!nm->pending && space_allows(s->sp, &p) && !prune_rejects(s->pr, &p)) {
		nm->pending = true;
		nm->ask = p;
		nlopt_force_stop(nm->opt);
	}
	return nm->run.penalty;
}

/* Replay the current run. 0 with nm->ask when it reaches an unobserved point, 1 when
 * the run is over, -1 on an NLopt error (message in err). */
static int nm_replay(strategy *s, struct nm *nm, char *err, size_t errlen)
{
	double x[SPACE_MAX_DIMS] = {0}, lb[SPACE_MAX_DIMS], ub[SPACE_MAX_DIMS], minf;
	nlopt_result res;
	struct point p;
	int rc = -1;

	nm->pending = false;
	nm->s = s;
	if (nm->run.n == 0) {
		nm_round(s, &nm->run, x, &p);
		if (!strategy_eligible(s, &p))
			return 1;
		nm->ask = p;
		return 0;
	}
	nm->opt = nlopt_create(NLOPT_LN_NELDERMEAD, (unsigned)nm->run.n);
	if (!nm->opt) {
		snprintf(err, errlen, "nm: nlopt_create failed (out of memory)");
		return -1;
	}
	for (size_t k = 0; k < nm->run.n; k++) {
		x[k] = nm->run.x0[k];
		lb[k] = 0.0;
		ub[k] = 1.0;
	}
	if (nlopt_set_lower_bounds(nm->opt, lb) < 0 || nlopt_set_upper_bounds(nm->opt, ub) < 0 ||
	    nlopt_set_min_objective(nm->opt, nm_objective, nm) < 0 ||
	    nlopt_set_initial_step1(nm->opt, nm->run.step) < 0 ||
	    nlopt_set_xtol_abs1(nm->opt, 1e-4) < 0 || nlopt_set_ftol_abs(nm->opt, 1e-12) < 0 ||
	    nlopt_set_maxeval(nm->opt, (int)(60 + 30 * nm->run.n)) < 0) {
		snprintf(err, errlen, "nm: configuring NLopt failed: %s", nlopt_get_errmsg(nm->opt));
		goto out;
	}
	res = nlopt_optimize(nm->opt, x, &minf);
	if (nm->pending) {
		rc = 0;
	} else if (res < 0 && res != NLOPT_ROUNDOFF_LIMITED && res != NLOPT_FORCED_STOP) {
		snprintf(err, errlen, "nm: nlopt_optimize failed (%d): %s", (int)res,
		         nlopt_get_errmsg(nm->opt) ? nlopt_get_errmsg(nm->opt) : "no message");
	} else {
		rc = 1;
	}
out:
	nlopt_destroy(nm->opt);
	nm->opt = NULL;
	return rc;
}

/* Best OK observation in combination `base`, or NULL. */
static const struct strategy_obs *combo_best(const strategy *s, const struct nm *nm,
                                             const struct point *base)
{
	const struct strategy_obs *best = NULL;
	struct point b;

	for (size_t i = 0; i < s->nobs; i++) {
		const struct strategy_obs *o = &s->obs[i];

		if (o->cls != OUTCOME_OK || (best && o->y >= best->y))
			continue;
		combo_of(s, nm, &o->p, &b);
		if (point_equal(&b, base, s->dims))
			best = o;
	}
	return best;
}

static bool combo_observed(const strategy *s, const struct nm *nm, const struct point *base)
{
	struct point b;

	for (size_t i = 0; i < s->nobs; i++) {
		combo_of(s, nm, &s->obs[i].p, &b);
		if (point_equal(&b, base, s->dims))
			return true;
	}
	return false;
}

static void run_setup(const strategy *s, const struct nm *nm, const struct point *base,
                      size_t runs_done, struct nm_run *run)
{
	const struct strategy_obs *best = combo_best(s, nm, base);
	double worst = -INFINITY;

	memset(run, 0, sizeof *run);
	run->base = *base;
	for (size_t d = 0; d < s->dims; d++) {
		if (dim_searched(s, d) && base->lv[d] != nm->null_level[d]) {
			run->x0[run->n] = best ? space_coord(s->sp, d, best->p.lv[d]) : 0.5;
			run->act[run->n++] = d;
		}
	}
	run->step = NM_FIRST_STEP * ldexp(1.0, -(int)runs_done);
	for (size_t i = 0; i < s->nobs; i++) {
		if (s->obs[i].cls == OUTCOME_OK && s->obs[i].y > worst)
			worst = s->obs[i].y;
	}
	run->penalty = isfinite(worst) ? worst + 1.0 : NM_NO_DATA_PENALTY;
}

/* Scout phase: the rounded centre of the first unobserved combination. */
static bool nm_scout(strategy *s, struct nm *nm, struct point *out)
{
	struct nm_run run;
	double centre[SPACE_MAX_DIMS];
	struct point base;

	if (nm->ncombos == 0 || nm->ncombos > NM_SCOUT_MAX)
		return false;
	for (uint64_t c = 0; c < nm->ncombos; c++) {
		combo_at(s, nm, c, &base);
		if (combo_pruned(s, &base) || combo_observed(s, nm, &base))
			continue;
		run_setup(s, nm, &base, 0, &run);
		for (size_t k = 0; k < run.n; k++)
			centre[k] = 0.5;
		nm_round(s, &run, centre, out);
		if (strategy_eligible(s, out))
			return true;
	}
	return false;
}

/* Choose the next run (see the header comment). Returns false when every
 * combination had its runs. */
static bool nm_next_run(strategy *s, struct nm *nm)
{
	struct point base, chosen;
	double best_y = INFINITY;
	size_t best_runs = SIZE_MAX, runs;
	uint64_t ncand = nm->ncombos ? nm->ncombos : s->nobs + 1;
	bool found = false;

	for (uint64_t c = 0; c < ncand; c++) {
		const struct strategy_obs *b;
		double y;

		if (nm->ncombos) {
			combo_at(s, nm, c, &base);
		} else if (c < s->nobs) {
			combo_of(s, nm, &s->obs[c].p, &base);
		} else {
			struct point p;
			char err[8];

			strategy_reseed(s, nm->r, SALT_NM);
			if (strategy_random_eligible(s, nm->r, NM_RANDOM_TRIES, &p, err, sizeof err))
				break;
			combo_of(s, nm, &p, &base);
		}
		if (combo_pruned(s, &base))
			continue;
		if (!pointmap_get(&nm->runs, &base, &runs))
			runs = 0;
		if (runs >= NM_RUNS_PER_COMBO)
			continue;
		b = combo_best(s, nm, &base);
		y = b ? b->y : INFINITY;
		if (!found || y < best_y || (y == best_y && runs < best_runs)) {
			found = true;
			best_y = y;
			best_runs = runs;
			chosen = base;
		}
	}
	if (!found)
		return false;
	run_setup(s, nm, &chosen, best_runs, &nm->run);
	nm->have_run = true;
	return true;
}

static int nm_suggest(strategy *s, struct point *out, char *err, size_t errlen)
{
	struct nm *nm = s->impl;
	uint64_t combos = nm->ncombos ? nm->ncombos : 64;
	size_t attempts = (size_t)(combos * NM_RUNS_PER_COMBO + 8), runs;

	if (nm_scout(s, nm, out))
		return 0;
	for (size_t a = 0; a < attempts; a++) {
		int rc;

		if (!nm->have_run && !nm_next_run(s, nm))
			break;
		rc = nm_replay(s, nm, err, errlen);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			*out = nm->ask;
			return 0;
		}
		if (!pointmap_get(&nm->runs, &nm->run.base, &runs))
			runs = 0;
		if (pointmap_put(&nm->runs, &nm->run.base, runs + 1) < 0) {
			snprintf(err, errlen, "nm: out of memory");
			return -1;
		}
		nm->have_run = false;
	}
	strategy_reseed(s, nm->r, SALT_NM + 1);
	return strategy_random_eligible(s, nm->r, NM_RANDOM_TRIES, out, err, errlen);
}

const struct strategy_ops strategy_nm_ops = {
	.name = "nm",
	.create = nm_create,
	.destroy = nm_destroy,
	.suggest = nm_suggest,
	.observe = NULL,
};
