/* prune.h - failure rules learned from outcomes; every strategy asks before suggesting.
 *
 * A categorical level (e.g. NCCL_ALGO=Tree) that failed the same way at several
 * different settings of the other parameters and never succeeded becomes a rule; so does
 * a pair of levels of two categorical parameters that each worked elsewhere but never
 * together (NCCL_PROTO=Simple with NCCL_ALGO unset, where NCCL itself then picks Tree);
 * a point that ever gave a wrong sum is banned and its neighbourhood is suspect. */
#ifndef NCCLTUNE_PRUNE_H
#define NCCLTUNE_PRUNE_H

#include <stdbool.h>
#include "run/outcome.h"
#include "space/space.h"

typedef struct prune prune;

struct prune_rule {
	size_t dim, level;             /* the pruned categorical level */
	bool pair;                     /* ... together with level2 of dim2 (dim < dim2) */
	size_t dim2, level2;
	enum outcome_class cls;        /* how it failed */
	int failures, runs;            /* failed `failures` of `runs` runs */
	char text[256];                /* "NCCL_ALGO=Tree: failed at graph capture in 3 of 3 runs; pruned" */
};

/* Does p have the rule's level (both levels, for a pair)? Can't fail. */
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
