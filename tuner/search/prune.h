/* prune.h - failure rules learned from outcomes; every strategy asks before suggesting.
 *
 * A level (e.g. NCCL_ALGO=Tree; or, where every point is a whole process, a level of an
 * ordinal variable: NCCL_NTHREADS=512 where every process hangs) that failed the same way at several different settings of the other parameters and never
 * succeeded becomes a rule; so does a pair of levels of two categorical parameters that
 * each worked elsewhere but never together (NCCL_PROTO=Simple with NCCL_ALGO unset, where
 * NCCL itself then picks Tree); a point that ever gave a wrong sum is banned and its
 * neighbourhood is suspect. A rule over per-size choices (rule.<bytes>.*) is scoped by
 * the process-level settings it failed under, and generalises over a process-level
 * variable only once it failed under two of its levels without ever passing there. */
#ifndef NCCLTUNE_PRUNE_H
#define NCCLTUNE_PRUNE_H

#include <stdbool.h>
#include "run/outcome.h"
#include "space/space.h"

typedef struct prune prune;

struct prune_rule {
	size_t dim, level;             /* the pruned level */
	bool pair;                     /* ... together with level2 of dim2 (dim < dim2) */
	size_t dim2, level2;
	enum outcome_class cls;        /* how it failed */
	int failures, runs;            /* failed `failures` of `runs` runs */
	char text[384];                /* "NCCL_ALGO=Tree: failed at graph capture in 3 of 3 runs; pruned" */
	bool scoped;                   /* only where p's levels equal scope's at the dims of
	                                  in_scope (process-level settings it failed under) */
	bool in_scope[SPACE_MAX_DIMS];
	struct point scope;
};

/* Does p have the rule's level (both levels, for a pair), within its scope? Can't fail. */
bool prune_rule_matches(const struct prune_rule *r, const struct point *p);

/* A pruner for `sp` (borrowed; must outlive it). `min_failures` distinct failing
 * points make a rule (3 by default when 0). NULL when out of memory. */
prune *prune_create(const space *sp, int min_failures);
void prune_destroy(prune *pr);   /* accepts NULL */

/* Learn from one (final, after any retry) outcome at p. Can't fail. */
void prune_observe(prune *pr, const struct point *p, const struct outcome *o);

/* Should p never be run: it matches a rule, or it gave a wrong sum? */
bool prune_rejects(const prune *pr, const struct point *p);

/* Is p near a point that gave a wrong sum (differs in one ordinal step)? Such a point
 * may be run but never recommended without a clean re-measurement. */
bool prune_suspect(const prune *pr, const struct point *p);

/* Estimated probability that p runs without failing, from the failures seen so far
 * (1.0 with no evidence). Used to weight expected improvement. */
double prune_feasibility(const prune *pr, const struct point *p);

/* The rules in force, in the order they were learned. */
size_t prune_rule_count(const prune *pr);
const struct prune_rule *prune_rule_at(const prune *pr, size_t i);

#endif
