/* strategy_bo_impl.h - the inside of the bo strategy, shared by its model and
 * suggestion loop (strategy_bo.c) and its candidate generation, scoring and local
 * search (strategy_bo_cand.c). Nothing outside tuner/search includes it. */
#ifndef NCCLTUNE_STRATEGY_BO_IMPL_H
#define NCCLTUNE_STRATEGY_BO_IMPL_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>

#include "search/gp.h"
#include "search/strategy_impl.h"

#define BO_SHORT_LIST 6          /* numeric dimensions of at most this many levels are
                                    modelled as categories */
#define BO_WARP_EXPONENT 0.5     /* ordered inputs enter the GP as coord^this */
#define BO_EXHAUSTIVE_MAX 20000
#define BO_RANDOM_CANDIDATES 1000
#define BO_TOP_POINTS 5
#define BO_PERTURB_PER_TOP 40
#define BO_LOCAL_STARTS 3
#define BO_LOCAL_ITERS 25
#define BO_ALL_LEVELS_MAX 64     /* beyond this, moves are +-1, +-2, +-4, ... */
#define BO_FIT_MAX_POINTS 80
#define BO_UB_SLACK 1e-9        /* added to the tight bound of log EI (cand_add) */
#define BO_MODEL_MAX_POINTS 256  /* the GP's data beyond this many successes: a subset */
#define BO_MODEL_BEST 128        /* of which the best */
#define BO_MODEL_LOCAL 64        /* then those most correlated with the top points */
#define BO_SOBOL_WALK 4096
#define BO_RANDOM_TRIES 2000
#define SALT_BO 0x626f626fULL
#define SALT_SHIFT 0x7368696674ULL

struct cand {
	struct point p;
	double mu;
	double ub;      /* log EI at the prior's sigma: the scoring order */
	double ubt;     /* log EI at gp_predict_mean_bound's sigma: a tighter bound */
	double score;   /* NAN until computed exactly */
};

struct bo {
	gp *g;
	double *coord[SPACE_MAX_DIMS];   /* per dimension and level: the GP input (encode) */
	size_t n_init;
	bool fitted;
	size_t fit_n;
	double theta[GP_MAX_HYPER];
	double shift[SPACE_MAX_DIMS];
	gsl_rng *r;
	/* model data: every success (x, y), and the GP's subset (mx, my) beyond the cap */
	double *x, *y;
	size_t *row_obs;          /* per row of x, y: its index in s->obs */
	unsigned char *in_model;  /* per row: among the GP's data (when capped) */
	size_t cap;
	bool capped;              /* the last GP was built on a subset */
	double mx[BO_MODEL_MAX_POINTS * SPACE_MAX_DIMS], my[BO_MODEL_MAX_POINTS];
	double best;            /* lowest standardised y */
	double ymean, ysd;      /* y = ymean + ysd * standardised y */
	double sigma_max;
	/* the last hyperparameter fit, so that a recommendation's fit (which must not
	 * change the strategy's state) is not redone by the next suggestion */
	bool memo_valid, memo_warm;
	size_t memo_n;
	double memo_from[GP_MAX_HYPER], memo_theta[GP_MAX_HYPER];
	double *work;
	/* candidates */
	struct cand *c;
	size_t nc, capc;
	size_t *order;
	struct pointmap cset;   /* point -> index in c */
	struct strategy_bo_stats st;
	unsigned long long subset_kernels;   /* kernel evaluations choosing subsets */
};

/* A point as GP inputs (the table bo_create filled). Can't fail. (strategy_bo_cand.c:
 * the bottom strategy_bo.c calls, never the other way round) */
void bo_encode(const strategy *s, const struct point *p, double *x);

/* The BO_TOP_POINTS best distinct successful points (indices into s->obs) into top;
 * how many. */
size_t bo_top_points(const strategy *s, size_t *top);

/* Fill b->c with the candidates of one suggestion (every allowed point when the space is
 * small enough, *exhaustive then true; else random points, neighbours and perturbations
 * of the best). Returns 0, or -1 when out of memory. */
int bo_build_candidates(strategy *s, struct bo *b, bool *exhaustive);

/* Score candidates in decreasing order of their bound until the bound drops below the
 * best score; keep the best BO_LOCAL_STARTS in starts. Returns the best index or
 * SIZE_MAX. */
size_t bo_score_candidates(const strategy *s, struct bo *b, size_t *starts, size_t *nstarts);

/* Best-improvement local search from candidate `from`; returns the index of the best
 * candidate it reached (possibly `from`), or SIZE_MAX when out of memory. */
size_t bo_local_search(const strategy *s, struct bo *b, size_t from);

#endif
