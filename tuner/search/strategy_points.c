/* strategy_points.c - the bottom every strategy shares (strategy.c, the interface, is
 * the top): a point hash map, whether a point was seen or may be proposed, and seeded
 * draws of eligible points. Nothing here calls a strategy or the interface. */
#include "search/strategy_impl.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest space strategy_random_eligible enumerates when sampling finds nothing. */
#define ENUM_MAX (UINT64_C(1) << 24)

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
