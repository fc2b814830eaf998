/* strategy.c - the strategy interface (the top of search/'s strategies): the name
 * table, creation and dispatch through each strategy's vtable, the observation log
 * every strategy shares, and the recommendation. What the strategies share below it
 * (the point map, eligibility, seeded draws) is strategy_points.c, which calls nothing
 * here, so calls between the strategy files go one way.
 *
 * Randomness: strategy_create draws one seed from the session's generator; every
 * suggestion then seeds a private generator from (that seed, number of observations),
 * so what a strategy proposes depends only on what it was told - a session resumed
 * by replaying its journal proposes the same next point as the original would have,
 * and a suggestion asked twice without an observation in between is the same. */
#include "search/strategy_impl.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const strategy_names[] = {"bo", "nm", "random", "grid", NULL};

static const struct strategy_ops *const strategy_table[] = {
	&strategy_bo_ops, &strategy_nm_ops, &strategy_random_ops, &strategy_grid_ops, NULL,
};

/* ---- the interface ---- */

strategy *strategy_create(const char *name, const space *sp, gsl_rng *rng,
                          const prune *pr, char *err, size_t errlen)
{
	const struct strategy_ops *ops = NULL;
	strategy *s = NULL;

	for (size_t i = 0; name && strategy_table[i]; i++) {
		if (strcmp(name, strategy_table[i]->name) == 0)
			ops = strategy_table[i];
	}
	if (!ops) {
		snprintf(err, errlen, "unknown strategy '%s' (bo, nm, random or grid)",
		         name ? name : "(null)");
		return NULL;
	}
	/* GSL aborts the process on errors by default; the GP handles GSL_EDOM from a
	 * Cholesky factorisation itself. This is process-wide and stays set. */
	gsl_set_error_handler_off();
	s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory creating strategy %s", name);
		return NULL;
	}
	s->ops = ops;
	s->sp = sp;
	s->pr = pr;
	s->rng = rng;
	s->dims = space_dims(sp);
	s->seed = gsl_rng_get(rng);
	pointmap_init(&s->seen, s->dims);
	if (ops->create(s, err, errlen) < 0) {
		strategy_destroy(s);
		return NULL;
	}
	return s;
}

void strategy_destroy(strategy *s)
{
	if (!s)
		return;
	if (s->ops && s->ops->destroy)
		s->ops->destroy(s);
	pointmap_free(&s->seen);
	free(s->obs);
	free(s);
}

int strategy_suggest(strategy *s, struct point *out, char *err, size_t errlen)
{
	struct point p;
	char desc[512];
	int rc;

	if (s->oom) {
		snprintf(err, errlen, "out of memory recording an observation");
		return -1;
	}
	memset(&p, 0, sizeof p);
	rc = s->ops->suggest(s, &p, err, errlen);
	if (rc != 0)
		return rc;
	/* every strategy promises this; a broken promise would rerun or run a pruned point */
	if (!strategy_eligible(s, &p)) {
		snprintf(err, errlen, "internal: strategy %s proposed an ineligible point: %s",
		         s->ops->name, space_point_describe(s->sp, &p, desc, sizeof desc));
		return -1;
	}
	*out = p;
	return 0;
}

void strategy_observe(strategy *s, const struct point *p, const struct outcome *o)
{
	struct strategy_obs ob;

	/* a point from another space (a stale warm start) cannot be encoded or proposed */
	for (size_t d = 0; d < s->dims; d++) {
		if (p->lv[d] >= space_levels(s->sp, d))
			return;
	}
	memset(&ob, 0, sizeof ob);
	memcpy(ob.p.lv, p->lv, s->dims * sizeof p->lv[0]);
	ob.cls = o->cls;
	ob.y = NAN;
	if (o->cls == OUTCOME_OK) {
		if (isfinite(o->objective_us) && o->objective_us > 0)
			ob.y = log(o->objective_us);
		else
			ob.cls = OUTCOME_GARBAGE;
	}
	if (s->nobs == s->capobs) {
		size_t ncap = s->capobs ? s->capobs * 2 : 64;
		struct strategy_obs *n = realloc(s->obs, ncap * sizeof *n);

		if (!n) {
			s->oom = true;
			return;
		}
		s->obs = n;
		s->capobs = ncap;
	}
	if (pointmap_put(&s->seen, &ob.p, s->nobs) < 0) {
		s->oom = true;
		return;
	}
	s->obs[s->nobs++] = ob;
	if (s->ops->observe)
		s->ops->observe(s, &ob);
}

/* ---- recommendation ---- */

/* One distinct observed point, while ranking. */
struct rank_entry {
	struct point p;
	size_t first;      /* index of its first observation: the tie-break */
	double sum_y;      /* of its ok runs' log-objectives */
	size_t nok;
	bool failed;       /* some observation of it was not ok */
	double est;        /* log objective_us */
};

static int cmp_rank(const void *a, const void *b)
{
	const struct rank_entry *x = a, *y = b;

	if (x->est != y->est)
		return x->est < y->est ? -1 : 1;
	return (x->first > y->first) - (x->first < y->first);
}

/* The qualifying points of the observation log, with their estimates, best first, in
 * *out (caller frees). Returns 0 with *n (possibly 0), or -1 when out of memory. */
static int rank_all(strategy *s, struct rank_entry **out, size_t *n)
{
	struct pointmap idx;
	struct rank_entry *e = NULL;
	struct point *pts = NULL;
	double *est = NULL;
	size_t ne = 0, nq = 0;
	int rc = -1;

	*out = NULL;
	*n = 0;
	pointmap_init(&idx, s->dims);
	if (s->nobs == 0)
		return 0;
	e = calloc(s->nobs, sizeof *e);
	if (!e)
		goto out;
	for (size_t i = 0; i < s->nobs; i++) {
		const struct strategy_obs *o = &s->obs[i];
		size_t k;

		if (!pointmap_get(&idx, &o->p, &k)) {
			k = ne++;
			if (pointmap_put(&idx, &o->p, k) < 0)
				goto out;
			e[k].p = o->p;
			e[k].first = i;
		}
		if (o->cls == OUTCOME_OK) {
			e[k].sum_y += o->y;
			e[k].nok++;
		} else {
			e[k].failed = true;
		}
	}
	/* keep what may be recommended, in first-observation order */
	for (size_t k = 0; k < ne; k++) {
		if (e[k].failed || e[k].nok == 0 || !space_allows(s->sp, &e[k].p) ||
		    prune_rejects(s->pr, &e[k].p) || prune_suspect(s->pr, &e[k].p))
			continue;
		e[nq] = e[k];
		e[nq].est = e[k].sum_y / (double)e[k].nok;
		nq++;
	}
	if (nq > 0 && s->ops->estimate) {
		int er;

		pts = malloc(nq * sizeof *pts);
		est = malloc(nq * sizeof *est);
		if (!pts || !est)
			goto out;
		for (size_t k = 0; k < nq; k++)
			pts[k] = e[k].p;
		er = s->ops->estimate(s, pts, nq, est);
		if (er < 0)
			goto out;
		for (size_t k = 0; er == 0 && k < nq; k++) {
			if (isfinite(est[k]))   /* a non-finite estimate: keep the measurement */
				e[k].est = est[k];
		}
	}
	qsort(e, nq, sizeof *e, cmp_rank);
	*out = e;
	*n = nq;
	e = NULL;
	rc = 0;
out:
	free(est);
	free(pts);
	free(e);
	pointmap_free(&idx);
	return rc;
}

int strategy_rank(strategy *s, struct point *out, double *estimate_us, size_t max,
                  size_t *count)
{
	struct rank_entry *e;
	size_t n;

	*count = 0;
	if (rank_all(s, &e, &n) < 0)
		return -1;
	for (size_t k = 0; k < n && k < max; k++) {
		out[k] = e[k].p;
		if (estimate_us)
			estimate_us[k] = exp(e[k].est);
	}
	*count = n < max ? n : max;
	free(e);
	return 0;
}

int strategy_recommend(strategy *s, struct point *out, double *estimate_us)
{
	size_t n;

	if (strategy_rank(s, out, estimate_us, 1, &n) < 0)
		return -1;
	return n == 0;
}

const char *strategy_name(const strategy *s)
{
	return s->ops->name;
}
