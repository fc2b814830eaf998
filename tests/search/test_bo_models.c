/* test_bo_models.c - bo on the built-in NVLink machine MODELS, in-process (the
 * benchmark's landscape, bench/landscape.c), with the models' default noise: in every
 * one of 30 seeds the best configuration it ran within 60 runs must be within 5% of the
 * exhaustive optimum (scored at noise 0).
 *
 * A regression test. On these models the optimum needs NCCL_NTHREADS=256, a middle
 * level of a short numeric list, with LL; before bo modelled short lists as categories
 * (strategy_bo.c), seeds that had run 64 and 512 predicted 256 "in between" and never
 * ran it; with that change undone this test fails (worst seeds 11.0% and 11.9% off).
 * Fixed seeds and seeded noise: deterministic, no flakes. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../../bench/landscape.h"
#include "prune.h"
#include "strategy.h"

#define NSEEDS 30
#define BUDGET 60

/* Regret (noise-free value / optimum - 1) of the best point bo ran in `BUDGET` runs. */
static double best_run_regret(const struct landscape *ls, const space *sp, double opt,
                              unsigned long seed)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	prune *pr = prune_create(sp, 0);
	strategy *s = NULL;
	struct outcome *o = malloc(sizeof *o);
	char err[512];
	double best = INFINITY;

	CHECK(rng != NULL && pr != NULL && o != NULL);
	if (!rng || !pr || !o)
		goto out;
	gsl_rng_set(rng, seed);
	s = strategy_create("bo", sp, rng, pr, err, sizeof err);
	CHECK(s != NULL);
	for (int i = 0; s && i < BUDGET; i++) {
		struct point p;
		enum outcome_class cls;
		double y;

		if (strategy_suggest(s, &p, err, sizeof err) != 0 ||
		    landscape_measure(ls, &p, seed * 100003UL + (unsigned long)i, o, err,
		                      sizeof err) != 0) {
			fprintf(stderr, "%s seed %lu: %s\n", landscape_name(ls), seed, err);
			CHECK(false);
			break;
		}
		prune_observe(pr, &p, o);
		strategy_observe(s, &p, o);
		if (o->cls == OUTCOME_OK &&
		    landscape_exact(ls, &p, &y, &cls, err, sizeof err) == 1 && y / opt - 1 < best)
			best = y / opt - 1;
	}
out:
	strategy_destroy(s);
	prune_destroy(pr);
	if (rng)
		gsl_rng_free(rng);
	free(o);
	return best;
}

int main(void)
{
	static const char *const models[] = {"nvlink-h200-8gpu", "h200-nvlink-2gpu"};
	space *sp = space_default();
	struct workload w;
	char err[512];

	CHECK(sp != NULL);
	workload_default(&w);
	for (size_t m = 0; sp && m < sizeof models / sizeof models[0]; m++) {
		struct landscape *ls = landscape_open(models[m], sp, &w, err, sizeof err);
		struct landscape_optimum opt;
		double worst = -1;
		unsigned long worst_seed = 0;

		if (!ls || landscape_optimum(ls, &opt, err, sizeof err) != 0) {
			fprintf(stderr, "%s: %s\n", models[m], err);
			CHECK(false);
			landscape_close(ls);
			continue;
		}
		for (unsigned long seed = 1; seed <= NSEEDS; seed++) {
			double r = best_run_regret(ls, sp, opt.best_us, seed);

			if (!(r <= worst)) {
				worst = r;
				worst_seed = seed;
			}
		}
		fprintf(stderr, "%s: worst best-run regret over %d seeds at %d runs: %.1f%% "
		        "(seed %lu)\n", models[m], NSEEDS, BUDGET, 100 * worst, worst_seed);
		CHECK(worst <= 0.05);
		landscape_close(ls);
	}
	space_destroy(sp);
	return check_status();
}
