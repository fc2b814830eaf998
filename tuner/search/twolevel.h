/* twolevel.h - the two-level search's view of a space (issue 17): the OUTER space (the
 * process-level variables, which need a fresh probe process per value) that the strategy
 * searches, and per tuned size the INNER choices (the space's rule.<bytes>.algo|proto|ctas
 * levels) that one probe process sweeps side by side. It plans the inner choices of an
 * outer point (those the space allows and the pruner does not reject) and turns a sweep
 * report into inner results (each a full point of the space, learned by the pruner) and
 * the outer observation. Never sees a process or a file. */
#ifndef NCCLTUNE_TWOLEVEL_H
#define NCCLTUNE_TWOLEVEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/outcome.h"
#include "run/workload.h"
#include "search/prune.h"
#include "space/space.h"

#define TWOLEVEL_MAX_CHOICES 1024   /* PROTO_MAX_CHOICES: choices in one sweep file */
#define TWOLEVEL_OWN ((size_t)-1)  /* an inner result that is a size's own case */

typedef struct twolevel twolevel;

/* One inner choice of a plan: the full point (the outer point's levels, this size's rule
 * levels, every other size's rule dimensions at NCCL's choice) and what the sweep file
 * asks for it. */
struct twolevel_choice {
	struct point p;
	uint64_t bytes;
	size_t size;               /* index among the space's tuned sizes */
	const char *algo, *proto;  /* the space's level texts; NULL: NCCL's */
	int ctas;                  /* 0: NCCL's */
};

/* One inner result: a choice of a sweep, or a size's own case (index TWOLEVEL_OWN, the
 * report's `results` entry: every rule of that size at NCCL's choice). */
struct twolevel_inner {
	size_t run;                /* the session's 0-based index of the sweep run */
	size_t index;              /* position in the sweep file, or TWOLEVEL_OWN */
	struct point p;            /* the full point it measured */
	uint64_t bytes;
	enum outcome_class cls;
	double us;                 /* one all-reduce, median; NAN unless ok */
	double objective_us;       /* the workload at p (other sizes as measured in the same
	                            * process under NCCL's choice); NAN unless ok */
	char error[256];
};

/* The split of `sp` (borrowed; must outlive it). NULL with a message when the space has
 * no rule dimensions or when out of memory. */
twolevel *twolevel_create(const space *sp, char *err, size_t errlen);
void twolevel_destroy(twolevel *t);   /* accepts NULL */

/* The outer space: sp without its rule dimensions (and without constraints that name
 * one). It may have no dimension at all. */
const space *twolevel_outer_space(const twolevel *t);
/* Tuned sizes with rule dimensions. */
size_t twolevel_sizes(const twolevel *t);

/* The outer part of a full point, and the full point of an outer one with every rule
 * dimension at NCCL's choice (its null level; level 0 where it has none); full_of's
 * arguments may be the same point. Can't fail. */
void twolevel_outer_of(const twolevel *t, const struct point *full, struct point *outer);
void twolevel_full_of(const twolevel *t, const struct point *outer, struct point *full);
/* Do two full points have the same outer part? */
bool twolevel_same_outer(const twolevel *t, const struct point *a, const struct point *b);
/* Do a and b choose the same algorithm and protocol levels for size `bytes`? */
bool twolevel_same_pair(const twolevel *t, const struct point *a, const struct point *b,
                        uint64_t bytes);
/* Are all of p's rule dimensions at NCCL's choice? */
bool twolevel_rules_null(const twolevel *t, const struct point *p);

/* The inner choices of the outer point `outer_full` (a full point; its rule levels are
 * ignored) into out (TWOLEVEL_MAX_CHOICES entries), size by size, each size's levels in
 * mixed-radix order (algo slowest, then proto, then ctas): every combination of the
 * size's rule levels that sp allows, that `pr` does not reject (NULL: none) and that
 * `skip` (may be NULL) does not name, except the all-NCCL combination (the size's own
 * case, measured in every run). At most `max` (<= TWOLEVEL_MAX_CHOICES) are taken, in that
 * order; *dropped gets how many more there were. Returns how many were written. */
size_t twolevel_plan(const twolevel *t, const prune *pr, const struct point *outer_full,
                     bool (*skip)(void *ctx, const struct twolevel_choice *c), void *ctx,
                     size_t max, struct twolevel_choice *out, size_t *dropped);

/* The inner results of one sweep run over the n planned choices c, from report r (ok or
 * not), for the workload wl, into out (n + wl->n + wl->nguard entries; run left 0):
 * ok report: every choice (ok: its median; else its entry's stage as the class), every
 * tuned size's own case and every guard size's own case the report has (a guard's `us`
 * is its latency under NCCL's own choice, its objective the own case's workload; never
 * a tuned size's result: twolevel_best ignores it); failed report: the entries that were final, and the choice in flight,
 * failed with the run's class `run_cls` (a hang, a capture NCCL failed at, ...). Returns
 * how many were written; *in_flight gets the planned index of the choice in flight (or
 * TWOLEVEL_OWN when none was). Can't fail. */
size_t twolevel_learn(const twolevel *t, const struct workload *wl,
                      const struct twolevel_choice *c, size_t n, const struct proto_report *r,
                      enum outcome_class run_cls, struct twolevel_inner *out,
                      size_t *in_flight);

/* The outer observation of one outer point from its ok inner results in[0..n): per size
 * the fastest ok result (own case included), combined into one full point *best (checked
 * against sp's constraints; when the combination breaks one, the best single inner
 * point) with its workload objective *objective_us. Results `reject` says no to (may be
 * NULL: a wrong sum seen since) are left out. Returns 0, or -1 when some size has no ok
 * result (nothing to combine). */
int twolevel_best(const twolevel *t, const struct workload *wl, const struct twolevel_inner *in,
                  size_t n, bool (*reject)(void *ctx, const struct point *p), void *ctx,
                  struct point *best, double *objective_us);

#endif
