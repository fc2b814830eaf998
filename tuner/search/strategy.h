/* strategy.h - one interface for every search strategy (bo, nm, random, grid).
 *
 * A strategy never sees a process or a file: it proposes points and is told what they
 * came to. The session replays a resumed journal through strategy_observe, so a
 * strategy's state must depend only on the sequence of observations (and its seeded
 * random generator). Points that prune_rejects or that space_allows refuses are never
 * suggested. Each strategy lives in its own file (strategy_<name>.c). */
#ifndef NCCLTUNE_STRATEGY_H
#define NCCLTUNE_STRATEGY_H

#include <gsl/gsl_rng.h>
#include "run/outcome.h"
#include "search/prune.h"
#include "space/space.h"

typedef struct strategy strategy;

/* The strategies by name, NULL-terminated: {"bo", "nm", "random", "grid", NULL}. */
extern const char *const strategy_names[];

/* Create strategy `name` over `sp`, drawing randomness from `rng` and asking `pr`
 * (all borrowed, must outlive the strategy). Returns NULL with a message in err for
 * an unknown name or when out of memory. */
strategy *strategy_create(const char *name, const space *sp, gsl_rng *rng,
                          const prune *pr, char *err, size_t errlen);
void strategy_destroy(strategy *s);   /* accepts NULL */

/* Propose the next point to run. Returns 0 with *out set, 1 when the strategy has
 * nothing new to propose (space exhausted), -1 on an internal error (message in err). */
int strategy_suggest(strategy *s, struct point *out, char *err, size_t errlen);

/* Tell the strategy what running p came to (also for points it did not suggest: the
 * baseline's neighbours, warm-start points, replayed journal entries). Can't fail;
 * out of memory is reported by the next suggest. */
void strategy_observe(strategy *s, const struct point *p, const struct outcome *o);

/* The strategy's best guess of the best configuration it has observed: among the
 * points every observation of which was ok (a failure at any of its runs disqualifies
 * it), that space_allows, and that prune neither rejects nor holds suspect, the one
 * with the lowest estimated objective; *out gets it and *estimate_us (may be NULL)
 * that estimate in microseconds. The estimate is the strategy's own: bo's is the GP
 * posterior mean at the point (it pools repeated and neighbouring noisy runs, so one
 * lucky measurement among consistently worse neighbours is not taken at face value);
 * the other strategies' is the measurement, the geometric mean of its runs when a
 * point was observed more than once (bo uses that too while it has no usable model).
 * Ties go to the point observed first. Does not change what the strategy suggests
 * next. Returns 0, 1 when no point qualifies yet (*out untouched), -1 when out of
 * memory. */
int strategy_recommend(strategy *s, struct point *out, double *estimate_us);

/* Up to `max` points that strategy_recommend would choose from, best estimate first
 * (out[0] is strategy_recommend's point): for picking finalists to re-measure.
 * out holds max points; estimate_us (may be NULL) max values. *count gets how many
 * were written (0 when none qualifies). Does not change what the strategy suggests
 * next. Returns 0, or -1 when out of memory (*count is then 0). */
int strategy_rank(strategy *s, struct point *out, double *estimate_us, size_t max,
                  size_t *count);

/* The strategy's name as given to strategy_create. */
const char *strategy_name(const strategy *s);

#endif
