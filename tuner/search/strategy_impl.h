/* strategy_impl.h - what the strategy files share (private to tuner/strategy*.c): the
 * common state behind a `strategy` handle, the vtable each strategy fills in, a hash
 * map of points, and the helpers every strategy needs (eligibility, uniform draws,
 * seeding). */
#ifndef NCCLTUNE_STRATEGY_IMPL_H
#define NCCLTUNE_STRATEGY_IMPL_H

#include <stdint.h>
#include "search/strategy.h"

/* Points to size_t values, open addressing. */
struct pointmap {
	size_t dims;
	size_t cap, n;          /* cap is 0 or a power of two */
	struct point *keys;
	size_t *vals;
	unsigned char *used;
};

void pointmap_init(struct pointmap *m, size_t dims);
void pointmap_free(struct pointmap *m);
void pointmap_clear(struct pointmap *m);
/* Insert or overwrite. Returns 0, or -1 when out of memory (map unchanged). */
int pointmap_put(struct pointmap *m, const struct point *p, size_t val);
/* The value stored for p, or false when absent. val may be NULL. */
bool pointmap_get(const struct pointmap *m, const struct point *p, size_t *val);

/* One observation as the strategies see it. */
struct strategy_obs {
	struct point p;
	enum outcome_class cls;   /* OUTCOME_GARBAGE when "ok" came with a bad objective */
	double y;                 /* log(objective_us) when cls == OUTCOME_OK, else NAN */
};

struct strategy_ops {
	const char *name;
	/* Allocate s->impl. 0, or -1 with a message. */
	int (*create)(strategy *s, char *err, size_t errlen);
	void (*destroy)(strategy *s);   /* free s->impl (may be half-built) */
	/* As strategy_suggest; the result is checked by strategy.c. */
	int (*suggest)(strategy *s, struct point *out, char *err, size_t errlen);
	/* Called after s->obs[s->nobs - 1] was recorded; may be NULL. */
	void (*observe)(strategy *s, const struct strategy_obs *o);
	/* The strategy's estimate of log(objective_us) at each of the n points p (each
	 * observed ok), into est. 0; 1 when it has no estimate of its own (strategy.c then
	 * uses the mean measured log-objective); -1 when out of memory. Must not change
	 * what suggest proposes next. May be NULL (same as returning 1). */
	int (*estimate)(strategy *s, const struct point *p, size_t n, double *est);
};

struct strategy {
	const struct strategy_ops *ops;
	const space *sp;
	const prune *pr;
	gsl_rng *rng;
	size_t dims;
	unsigned long seed;          /* drawn from rng once, at creation */
	struct strategy_obs *obs;    /* in the order observed */
	size_t nobs, capobs;
	struct pointmap seen;        /* point -> index of its latest observation */
	bool oom;                    /* an observation was lost; reported by suggest */
	void *impl;
};

/* What the bo strategy's surrogate cost, for tests that bound its work without timing
 * anything (issue #12). Counts since strategy_create unless said otherwise. */
struct strategy_bo_stats {
	size_t models;               /* GPs built (suggestions past the design, estimates) */
	size_t model_points;         /* data points of the last GP built */
	size_t model_points_max;     /* the most of any GP built */
	size_t model_successes;      /* successful observations when the last GP was built */
	size_t fit_points_max;       /* the most points a hyperparameter fit ran on */
	size_t candidates;           /* candidates of the last suggestion */
	size_t exact_scores;         /* triangular solves of the last suggestion */
	unsigned long long kernels;  /* kernel evaluations (gp_kernel_count and the subset choice) */
	unsigned long long kernels_max_call;   /* the most of one suggestion or estimate */
};

/* Copy bo's statistics into *out. 0, or -1 when s is not a bo strategy. */
int strategy_bo_stats(const strategy *s, struct strategy_bo_stats *out);

extern const struct strategy_ops strategy_bo_ops, strategy_nm_ops, strategy_random_ops,
	strategy_grid_ops;

/* Has p been observed? */
bool strategy_seen(const strategy *s, const struct point *p);
/* The latest observation of p, or NULL. */
const struct strategy_obs *strategy_lookup(const strategy *s, const struct point *p);
/* May p be suggested: allowed by the space, not rejected by prune, not seen? */
bool strategy_eligible(const strategy *s, const struct point *p);

/* Seed a private generator from the strategy's seed, the number of observations and
 * a salt, so a suggestion depends on the observations only (a resumed session that
 * replays its journal proposes the same next point). Can't fail. */
void strategy_reseed(const strategy *s, gsl_rng *r, uint64_t salt);
/* Uniform integer in [0, n), n >= 1, for any n up to 2^64 - 1. */
uint64_t strategy_rng_below(gsl_rng *r, uint64_t n);
/* A uniform draw from the product of levels (may be ineligible). */
void strategy_draw_point(const strategy *s, gsl_rng *r, struct point *out);
/* A uniformly random eligible point: rejection sampling for `tries` draws, then an
 * enumeration of the space when it is small enough. Returns 0 with *out, 1 when no
 * eligible point is left, -1 with a message when the space is too large to
 * enumerate and the draws found nothing. */
int strategy_random_eligible(const strategy *s, gsl_rng *r, int tries, struct point *out,
                             char *err, size_t errlen);

#endif
