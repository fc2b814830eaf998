/* landscape.h - a machine model seen as the search strategies see a real machine: the
 * objective (time per workload step) of a point of the search space, exact (noise 0,
 * for scoring) or measured (the model's default noise, seeded, for the strategies).
 *
 * Everything is in-process (models/model.h's evaluator and the tuner's env_build and
 * workload_objective), so a benchmark runs thousands of "probe runs" per second; the
 * numbers are MODEL numbers, never measurements. */
#ifndef NCCLTUNE_BENCH_LANDSCAPE_H
#define NCCLTUNE_BENCH_LANDSCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include "run/outcome.h"
#include "space/space.h"
#include "run/workload.h"
#include "search/prune.h"

#include <gsl/gsl_rng.h>

struct landscape;

/* Load built-in model `name` for space `sp` (borrowed; must outlive the landscape) and
 * workload `w` (copied). Returns NULL with a message naming the model in err. */
struct landscape *landscape_open(const char *name, const space *sp,
                                 const struct workload *w, char *err, size_t errlen);
void landscape_close(struct landscape *ls);   /* accepts NULL */

const char *landscape_name(const struct landscape *ls);

/* Scale the model's noise for landscape_measure (1: the model's default, as opened;
 * 0: exact values, for diagnostics that separate search from noise). Can't fail. */
void landscape_set_noise(struct landscape *ls, double scale);

/* The exact objective of p (NULL: the baseline, every searched variable unset).
 * Returns 1 with *objective_us set when the configuration works, 0 when it fails on
 * the modelled machine (*cls says how), -1 when out of memory (message in err). */
int landscape_exact(const struct landscape *ls, const struct point *p, double *objective_us,
                    enum outcome_class *cls, char *err, size_t errlen);

/* One noisy "probe run" of p (NULL: baseline) as the runner would report it: *o is
 * filled like the session fills it from a model probe's report (class, objective,
 * report). `seed` picks the noise stream (with the model's per-configuration seed).
 * Returns 0, or -1 when out of memory (message in err). */
int landscape_measure(const struct landscape *ls, const struct point *p, unsigned long seed,
                      struct outcome *o, char *err, size_t errlen);

/* The exhaustive optimum over every point sp allows, with noise 0: the best working
 * point and its objective, how many points were allowed, how many of those fail and
 * how many work within 1%, 2% and 5% of the optimum (how hard "close" is to hit).
 * Returns 0, or -1 with a message (no working point at all, out of memory). */
struct landscape_optimum {
	struct point best;
	double best_us;
	uint64_t allowed, failing, within1, within2, within5;
};
int landscape_optimum(const struct landscape *ls, struct landscape_optimum *out,
                      char *err, size_t errlen);

/* A uniformly random point that sp allows and pr does not reject (rejection sampling:
 * about half the default space is allowed). Returns 0, or -1 after many misses. */
int landscape_random_point(const space *sp, const prune *pr, gsl_rng *rng, struct point *p);

#endif
