/* strategy.c - the strategy interface: the name table, creation and dispatch through
 * each strategy's vtable, the observation log every strategy shares, a point hash
 * map, and helpers for eligibility and seeded draws.
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

/* Largest space strategy_random_eligible enumerates when sampling finds nothing. */
#define ENUM_MAX (UINT64_C(1) << 24)

const char *const strategy_names[] = {"bo", "nm", "random", "grid", NULL};

static const struct strategy_ops *const strategy_table[] = {
	&strategy_bo_ops, &strategy_nm_ops, &strategy_random_ops, &strategy_grid_ops, NULL,
};

/* ---- point map ---- */

static uint64_t mix64(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static uint64_t point_hash(const struct point *p, size_t dims)
{
	uint64_t h = UINT64_C(0x243f6a8885a308d3);

	for (size_t d = 0; d < dims; d++)
		h = mix64(h ^ p->lv[d]);
	return h;
}

void pointmap_init(struct pointmap *m, size_t dims)
{
	memset(m, 0, sizeof *m);
	m->dims = dims;
}

void pointmap_free(struct pointmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	pointmap_init(m, m->dims);
}

void pointmap_clear(struct pointmap *m)
{
	if (m->used)
		memset(m->used, 0, m->cap);
	m->n = 0;
}

static size_t pointmap_slot(const struct pointmap *m, const struct point *p)
{
	size_t i = (size_t)point_hash(p, m->dims) & (m->cap - 1);

	while (m->used[i] && !point_equal(&m->keys[i], p, m->dims))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int pointmap_grow(struct pointmap *m)
{
	struct pointmap big;
	size_t ncap = m->cap ? m->cap * 2 : 64;

	pointmap_init(&big, m->dims);
	big.cap = ncap;
	big.keys = calloc(ncap, sizeof *big.keys);
	big.vals = calloc(ncap, sizeof *big.vals);
	big.used = calloc(ncap, 1);
	if (!big.keys || !big.vals || !big.used) {
		pointmap_free(&big);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->used[i])
			continue;
		j = pointmap_slot(&big, &m->keys[i]);
		big.used[j] = 1;
		big.keys[j] = m->keys[i];
		big.vals[j] = m->vals[i];
		big.n++;
	}
	pointmap_free(m);
	*m = big;
	return 0;
}

int pointmap_put(struct pointmap *m, const struct point *p, size_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && pointmap_grow(m) < 0)
		return -1;
	i = pointmap_slot(m, p);
	if (!m->used[i]) {
		m->used[i] = 1;
		memset(&m->keys[i], 0, sizeof m->keys[i]);
		memcpy(m->keys[i].lv, p->lv, m->dims * sizeof p->lv[0]);
		m->n++;
	}
	m->vals[i] = val;
	return 0;
}

bool pointmap_get(const struct pointmap *m, const struct point *p, size_t *val)
{
	size_t i;

	if (m->n == 0)
		return false;
	i = pointmap_slot(m, p);
	if (!m->used[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

/* ---- shared helpers ---- */

bool strategy_seen(const strategy *s, const struct point *p)
{
	return pointmap_get(&s->seen, p, NULL);
}

const struct strategy_obs *strategy_lookup(const strategy *s, const struct point *p)
{
	size_t i;

	return pointmap_get(&s->seen, p, &i) ? &s->obs[i] : NULL;
}

bool strategy_eligible(const strategy *s, const struct point *p)
{
	return space_allows(s->sp, p) && !prune_rejects(s->pr, p) && !strategy_seen(s, p);
}

void strategy_reseed(const strategy *s, gsl_rng *r, uint64_t salt)
{
	uint64_t h = mix64(mix64((uint64_t)s->seed) ^ (uint64_t)s->nobs) ^ mix64(salt);

	/* mt19937 keeps 32 bits of its seed, and 0 means "the default seed" */
	gsl_rng_set(r, (unsigned long)((h ^ (h >> 32)) & 0xffffffffu) | 1u);
}

uint64_t strategy_rng_below(gsl_rng *r, uint64_t n)
{
	uint64_t lim, x;

	if (n <= gsl_rng_max(r) - gsl_rng_min(r))
		return (uint64_t)gsl_rng_uniform_int(r, (unsigned long)n);
	/* two 32-bit draws, rejecting the biased tail */
	lim = UINT64_MAX - UINT64_MAX % n;
	do {
		x = ((uint64_t)gsl_rng_uniform_int(r, 1ul << 31) << 33) ^
		    ((uint64_t)gsl_rng_uniform_int(r, 1ul << 31) << 2) ^
		    (uint64_t)gsl_rng_uniform_int(r, 4);
	} while (x >= lim);
	return x % n;
}

void strategy_draw_point(const strategy *s, gsl_rng *r, struct point *out)
{
	memset(out, 0, sizeof *out);
	for (size_t d = 0; d < s->dims; d++)
		out->lv[d] = (uint32_t)gsl_rng_uniform_int(r, space_levels(s->sp, d));
}

int strategy_random_eligible(const strategy *s, gsl_rng *r, int tries, struct point *out,
                             char *err, size_t errlen)
{
	uint64_t card = space_cardinality(s->sp), count = 0, pick;
	struct point p;

	for (int t = 0; t < tries; t++) {
		strategy_draw_point(s, r, &p);
		if (strategy_eligible(s, &p)) {
			*out = p;
			return 0;
		}
	}
	if (card > ENUM_MAX) {
		snprintf(err, errlen, "no eligible point in %d random draws, and the space "
		         "(%llu points) is too large to enumerate", tries, (unsigned long long)card);
		return -1;
	}
	for (uint64_t i = 0; i < card; i++) {
		space_point_at(s->sp, i, &p);
		count += strategy_eligible(s, &p);
	}
	if (count == 0)
		return 1;
	pick = strategy_rng_below(r, count);
	for (uint64_t i = 0; i < card; i++) {
		space_point_at(s->sp, i, &p);
		if (strategy_eligible(s, &p) && pick-- == 0) {
			*out = p;
			return 0;
		}
	}
	snprintf(err, errlen, "internal: eligible points changed during enumeration");
	return -1;
}

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
