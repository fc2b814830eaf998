/* synthetic_landscape.h - a synthetic latency landscape shaped like the seed's PCIe box, and a
 * session loop that drives a strategy over it (tests only). */
#ifndef NCCLTUNE_TEST_SYNTHETIC_LANDSCAPE_H
#define NCCLTUNE_TEST_SYNTHETIC_LANDSCAPE_H

#include "run/outcome.h"
#include "space/space.h"

/* The outcome of running p of the default space (space_default). Deterministic. */
void landscape_eval(const space *sp, const struct point *p, struct outcome *o);

/* The lowest objective of any allowed, successful point (exhaustive). */
double landscape_optimum(const space *sp);

#define LANDSCAPE_MAX_BUDGET 256

struct session_stats {
	double best;          /* lowest objective found; INFINITY if none ran */
	int runs;             /* suggestions made */
	int repeats;          /* suggestions of an already observed point */
	int rejected;         /* suggestions prune_rejects or space_allows refused */
	int exhausted;        /* suggest returned 1 */
	int errors;           /* suggest returned -1 */
	unsigned long long hash;   /* of the sequence of suggested points */
	double trace[LANDSCAPE_MAX_BUDGET];   /* best found after run i + 1 */
};

/* Run `budget` (<= LANDSCAPE_MAX_BUDGET) suggestions of strategy `name` (seed `seed`)
 * on the default space. */
void landscape_session(const char *name, unsigned long seed, int budget,
                       struct session_stats *st);

#endif
