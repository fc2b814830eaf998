/* strategy_bo_cand.c - bo's candidates for one suggestion: the exhaustive list or
 * random points plus neighbours and perturbations of the best, each scored by expected
 * improvement (bounds first, exact scores only where they can win), then a local search
 * from the best few. The model these scores come from is strategy_bo.c. */
#include "search/strategy_bo_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/acq.h"

/* ---- the GP's inputs (the top, strategy_bo.c, encodes through here too) ---- */

void bo_encode(const strategy *s, const struct point *p, double *x)
{
	const struct bo *b = s->impl;

	for (size_t d = 0; d < s->dims; d++)
		x[d] = b->coord[d][p->lv[d]];
}

/* ---- candidates ---- */

static int cand_add(const strategy *s, struct bo *b, const struct point *p)
{
	double x[SPACE_MAX_DIMS], vub;
	struct cand *c;

	if (pointmap_get(&b->cset, p, NULL) || !strategy_eligible(s, p))
		return 0;
	if (b->nc == b->capc) {
		size_t ncap = b->capc ? b->capc * 2 : 1024;
		struct cand *nc = realloc(b->c, ncap * sizeof *nc);

		if (!nc)
			return -1;
		b->c = nc;
		b->capc = ncap;
	}
	if (pointmap_put(&b->cset, p, b->nc) < 0)
		return -1;
	c = &b->c[b->nc++];
	c->p = *p;
	bo_encode(s, p, x);
	gp_predict_mean_bound(b->g, x, &c->mu, &vub);
	c->ub = acq_log_ei(c->mu, b->sigma_max, b->best);
	/* widened by BO_UB_SLACK so that round-off in log EI cannot put a score above it */
	c->ubt = acq_log_ei(c->mu, sqrt(vub), b->best) + BO_UB_SLACK;
	c->score = NAN;
	return 0;
}

static double cand_score(const strategy *s, struct bo *b, struct cand *c)
{
	double x[SPACE_MAX_DIMS], mu, var;

	if (isnan(c->score)) {
		bo_encode(s, &c->p, x);
		gp_predict(b->g, x, &mu, &var, b->work);
		b->st.exact_scores++;
		c->score = acq_score(mu, sqrt(var), b->best, prune_feasibility(s->pr, &c->p));
	}
	return c->score;
}

/* Levels a single-parameter move of level l may go to: all of them for small
 * dimensions, else geometric steps both ways and the ends. */
static size_t move_targets(const strategy *s, size_t d, uint32_t l, uint32_t *t)
{
	size_t n = space_levels(s->sp, d), k = 0;

	if (n <= BO_ALL_LEVELS_MAX || space_is_categorical(s->sp, d)) {
		for (size_t v = 0; v < n && k < SPACE_MAX_LEVELS; v++) {
			if (v != l)
				t[k++] = (uint32_t)v;
		}
		return k;
	}
	for (size_t step = 1; step < n; step *= 2) {
		if (l >= step)
			t[k++] = (uint32_t)(l - step);
		if (l + step < n)
			t[k++] = (uint32_t)(l + step);
	}
	if (l != 0)
		t[k++] = 0;
	if (l != n - 1)
		t[k++] = (uint32_t)(n - 1);
	return k;
}

/* Is d an ordinal dimension whose levels l and l+step are both set? */
static bool ordinal_step(const strategy *s, size_t d, uint32_t l, int step, uint32_t *to)
{
	long v = (long)l + step;

	if (space_is_categorical(s->sp, d) || v < 0 || v >= (long)space_levels(s->sp, d) ||
	    !space_level_text(s->sp, d, l) || !space_level_text(s->sp, d, (size_t)v))
		return false;
	*to = (uint32_t)v;
	return true;
}

static int add_neighbours(const strategy *s, struct bo *b, const struct point *p)
{
	uint32_t *t = malloc(SPACE_MAX_LEVELS * sizeof *t);
	int rc = -1;

	if (!t)
		return -1;
	for (size_t d = 0; d < s->dims; d++) {
		size_t k = move_targets(s, d, p->lv[d], t);

		for (size_t i = 0; i < k; i++) {
			struct point q = *p;

			q.lv[d] = t[i];
			if (cand_add(s, b, &q) < 0)
				goto out;
		}
	}
	for (size_t d1 = 0; d1 < s->dims; d1++) {
		for (size_t d2 = d1 + 1; d2 < s->dims; d2++) {
			for (int sgn = 0; sgn < 4; sgn++) {
				struct point q = *p;

				if (!ordinal_step(s, d1, p->lv[d1], sgn & 1 ? 1 : -1, &q.lv[d1]) ||
				    !ordinal_step(s, d2, p->lv[d2], sgn & 2 ? 1 : -1, &q.lv[d2]))
					continue;
				if (cand_add(s, b, &q) < 0)
					goto out;
			}
		}
	}
	rc = 0;
out:
	free(t);
	return rc;
}

static int add_perturbations(const strategy *s, struct bo *b, const struct point *p)
{
	for (int i = 0; i < BO_PERTURB_PER_TOP; i++) {
		struct point q = *p;
		int changes = 2 + (int)gsl_rng_uniform_int(b->r, 2);

		for (int c = 0; c < changes; c++) {
			size_t d = gsl_rng_uniform_int(b->r, s->dims), n = space_levels(s->sp, d);
			long step = (long)gsl_rng_uniform_int(b->r, 7) - 3;

			/* half the time a small ordinal step, else any level */
			if (!space_is_categorical(s->sp, d) && (i & 1) && step != 0 &&
			    (long)q.lv[d] + step >= 0 && (long)q.lv[d] + step < (long)n)
				q.lv[d] = (uint32_t)((long)q.lv[d] + step);
			else
				q.lv[d] = (uint32_t)gsl_rng_uniform_int(b->r, n);
		}
		if (cand_add(s, b, &q) < 0)
			return -1;
	}
	return 0;
}

/* The BO_TOP_POINTS best distinct successful points (indices into s->obs). */
size_t bo_top_points(const strategy *s, size_t *top)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nobs; i++) {
		const struct strategy_obs *o = &s->obs[i];
		size_t j;
		bool dup = false;

		if (o->cls != OUTCOME_OK)
			continue;
		for (j = 0; j < k && !dup; j++)
			dup = point_equal(&s->obs[top[j]].p, &o->p, s->dims);
		if (dup)
			continue;
		for (j = k; j > 0 && s->obs[top[j - 1]].y > o->y; j--) {
			if (j < BO_TOP_POINTS)
				top[j] = top[j - 1];
		}
		if (j < BO_TOP_POINTS) {
			top[j] = i;
			k += k < BO_TOP_POINTS;
		}
	}
	return k;
}

int bo_build_candidates(strategy *s, struct bo *b, bool *exhaustive)
{
	uint64_t card = space_cardinality(s->sp);
	size_t top[BO_TOP_POINTS], ntop;
	struct point p;

	b->nc = 0;
	pointmap_clear(&b->cset);
	*exhaustive = card <= BO_EXHAUSTIVE_MAX;
	if (*exhaustive) {
		for (uint64_t i = 0; i < card; i++) {
			space_point_at(s->sp, i, &p);
			if (cand_add(s, b, &p) < 0)
				return -1;
		}
		return 0;
	}
	ntop = bo_top_points(s, top);
	for (size_t i = 0; i < ntop; i++) {
		if (add_neighbours(s, b, &s->obs[top[i]].p) < 0 ||
		    add_perturbations(s, b, &s->obs[top[i]].p) < 0)
			return -1;
	}
	for (int i = 0, added = 0; i < 3 * BO_RANDOM_CANDIDATES && added < BO_RANDOM_CANDIDATES; i++) {
		size_t before = b->nc;

		strategy_draw_point(s, b->r, &p);
		if (cand_add(s, b, &p) < 0)
			return -1;
		added += b->nc > before;
	}
	return 0;
}

/* Sort candidate indices by upper bound, decreasing (ties: index). */
static void sort_by_ub(size_t *ord, size_t n, const struct cand *c)
{
	/* bottom-up merge sort through a scratch half: n can be 20000 */
	size_t *tmp = ord + n;

	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi) {
				bool take_j = c[ord[j]].ub > c[ord[i]].ub;

				tmp[k++] = take_j ? ord[j++] : ord[i++];
			}
			while (i < mid)
				tmp[k++] = ord[i++];
			while (j < hi)
				tmp[k++] = ord[j++];
		}
		memcpy(ord, tmp, n * sizeof *ord);
	}
}

/* Score candidates in decreasing order of their bound until the bound drops below
 * the best score; keep the best BO_LOCAL_STARTS. Returns the best index or SIZE_MAX. */
size_t bo_score_candidates(const strategy *s, struct bo *b, size_t *starts, size_t *nstarts)
{
	size_t best = SIZE_MAX, *ord;
	double best_score = -INFINITY;

	*nstarts = 0;
	if (b->nc == 0)
		return SIZE_MAX;
	ord = realloc(b->order, 2 * b->nc * sizeof *ord);
	if (!ord)
		return SIZE_MAX;
	b->order = ord;
	for (size_t i = 0; i < b->nc; i++)
		ord[i] = i;
	sort_by_ub(ord, b->nc, b->c);
	for (size_t k = 0; k < b->nc; k++) {
		struct cand *c = &b->c[ord[k]];
		double sc;
		double floor_score = *nstarts < BO_LOCAL_STARTS ? -INFINITY
		                     : b->c[starts[*nstarts - 1]].score;
		size_t j;

		if (c->ub <= best_score && c->ub <= floor_score)
			break;
		/* its score is at most ubt < floor_score <= best_score: scored, it would
		 * change neither the best nor the starts, so skip the triangular solve */
		if (c->ubt < floor_score)
			continue;
		sc = cand_score(s, b, c);
		if (sc > best_score || (sc == best_score && ord[k] < best)) {
			best_score = sc;
			best = ord[k];
		}
		/* insertion into the short list of local-search starts */
		if (*nstarts < BO_LOCAL_STARTS || sc > floor_score) {
			j = *nstarts < BO_LOCAL_STARTS ? (*nstarts)++ : BO_LOCAL_STARTS - 1;
			for (; j > 0 && b->c[starts[j - 1]].score < sc; j--)
				starts[j] = starts[j - 1];
			starts[j] = ord[k];
		}
	}
	return best;
}

/* Consider moving to r during local search: score it (when its bound can beat
 * *next_score) and keep it when better. -1 when out of memory. */
static int try_move(const strategy *s, struct bo *b, const struct point *r, size_t *next,
                    double *next_score)
{
	size_t idx;

	if (!pointmap_get(&b->cset, r, &idx)) {
		size_t before = b->nc;

		if (cand_add(s, b, r) < 0)
			return -1;
		if (b->nc == before)
			return 0;   /* not eligible */
		idx = before;
	}
	if (b->c[idx].ubt > *next_score && cand_score(s, b, &b->c[idx]) > *next_score) {
		*next_score = b->c[idx].score;
		*next = idx;
	}
	return 0;
}

/* Best-improvement local search from candidate `from`; returns the index of the best
 * candidate it reached (possibly `from`), or SIZE_MAX when out of memory. */
size_t bo_local_search(const strategy *s, struct bo *b, size_t from)
{
	uint32_t *t = malloc(SPACE_MAX_LEVELS * sizeof *t);
	size_t cur = from;

	if (!t)
		return SIZE_MAX;
	for (int it = 0; it < BO_LOCAL_ITERS; it++) {
		struct point p = b->c[cur].p, r;
		size_t next = cur;
		double next_score = b->c[cur].score;

		for (size_t d = 0; d < s->dims; d++) {
			size_t k = move_targets(s, d, p.lv[d], t);

			for (size_t i = 0; i < k; i++) {
				r = p;
				r.lv[d] = t[i];
				if (try_move(s, b, &r, &next, &next_score) < 0)
					goto oom;
			}
		}
		for (size_t d1 = 0; d1 < s->dims; d1++) {
			for (size_t d2 = d1 + 1; d2 < s->dims; d2++) {
				for (int sgn = 0; sgn < 4; sgn++) {
					r = p;
					if (!ordinal_step(s, d1, p.lv[d1], sgn & 1 ? 1 : -1, &r.lv[d1]) ||
					    !ordinal_step(s, d2, p.lv[d2], sgn & 2 ? 1 : -1, &r.lv[d2]))
						continue;
					if (try_move(s, b, &r, &next, &next_score) < 0)
						goto oom;
				}
			}
		}
		if (next == cur)
			break;
		cur = next;
	}
	free(t);
	return cur;
oom:
	free(t);
	return SIZE_MAX;
}
