/* strategy_bo.c - Bayesian optimisation: a Gaussian process of log(objective) (gp.c)
 * and expected improvement weighted by the probability of running (acq.c, prune.c).
 * The rationale of every choice below, and the profiling behind the scale limits, are in
 * tuner/search/README.md.
 *
 * Initial design: until n_init = clamp(dims + 4, 6, 12) distinct points have been
 * observed (or fewer than 2 ran), points of a Sobol sequence with a random digital shift
 * drawn from the strategy's seed; ineligible ones are skipped.
 * Model: successful runs only, y = log(objective_us) standardised; strings and
 * dimensions of at most BO_SHORT_LIST levels are categories, other numbers ordered and
 * warped as coord^BO_WARP_EXPONENT. Failures get no made-up values: they lower their
 * neighbourhood's score through prune_feasibility and are never rerun. Hyperparameters
 * are refitted (warm-started) after every new success below 30, then every 5th, then
 * every 10th beyond 100, on at most 80 points. Beyond BO_MODEL_MAX_POINTS successes the
 * GP is built on a subset of them (the best, the most correlated with the top points,
 * an even stride through the rest); everything else uses every observation.
 * Acquisition: score = log EI + log feasibility, maximised over every eligible point of
 * a space of at most BO_EXHAUSTIVE_MAX points, else over a candidate set followed by
 * local search (strategy_bo_cand.c); scoring is exact but pruned by two bounds that
 * leave the result unchanged. Seen, pruned and disallowed points are never candidates.
 * Recommendation (strategy_recommend): the observed point with the lowest posterior
 * mean; asking for one never changes what bo suggests (a due refit is memoised, not
 * kept); past the cap a point's posterior also sees its own runs the subset left out. */
#include "search/strategy_impl.h"
#include "search/strategy_bo_impl.h"

#include <gsl/gsl_qrng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/acq.h"
#include "search/gp.h"

int strategy_bo_stats(const strategy *s, struct strategy_bo_stats *out)
{
	const struct bo *b = s->ops == &strategy_bo_ops ? s->impl : NULL;

	if (!b)
		return -1;
	*out = b->st;
	out->kernels = gp_kernel_count(b->g) + b->subset_kernels;
	return 0;
}

/* Kernel evaluations so far, for the per-call maximum in the statistics. */
static unsigned long long kernels_now(const struct bo *b)
{
	return gp_kernel_count(b->g) + b->subset_kernels;
}

static void kernels_since(struct bo *b, unsigned long long k0)
{
	unsigned long long k = kernels_now(b) - k0;

	if (k > b->st.kernels_max_call)
		b->st.kernels_max_call = k;
}

static int bo_create(strategy *s, char *err, size_t errlen)
{
	struct bo *b = calloc(1, sizeof *b);
	struct gp_shape shape = {.dims = s->dims};

	if (!b)
		goto oom;
	s->impl = b;
	pointmap_init(&b->cset, s->dims);
	for (size_t d = 0; d < s->dims; d++) {
		size_t n = space_levels(s->sp, d), set = 0;

		for (size_t l = 0; l < n; l++)
			set += space_level_text(s->sp, d, l) != NULL;
		if (n < 2)
			shape.kind[d] = GP_IN_OFF;
		else if (space_is_categorical(s->sp, d) || n <= BO_SHORT_LIST)
			shape.kind[d] = GP_IN_CATEGORICAL;   /* strings, or a few numbers: see above */
		else if (set >= 2)
			shape.kind[d] = GP_IN_ORDINAL;
		else
			shape.kind[d] = GP_IN_CATEGORICAL;   /* one value or unset: a bit */
		shape.nullable[d] = set < n;
		/* the GP inputs of every level, once: an ordered input (in [0, 1]; -1 unset)
		 * is warped to coord^BO_WARP_EXPONENT (see the header comment) */
		b->coord[d] = malloc(n * sizeof *b->coord[d]);
		if (!b->coord[d])
			goto oom;
		for (size_t l = 0; l < n; l++) {
			double c = space_coord(s->sp, d, l);

			b->coord[d][l] = shape.kind[d] == GP_IN_ORDINAL && c > 0
			                 ? pow(c, BO_WARP_EXPONENT) : c;
		}
	}
	b->g = gp_create(&shape);
	b->r = gsl_rng_alloc(gsl_rng_mt19937);
	if (!b->g || !b->r)
		goto oom;
	b->n_init = s->dims + 4 < 6 ? 6 : s->dims + 4 > 12 ? 12 : s->dims + 4;
	/* the Sobol shift depends on the seed only, so the design is one sequence */
	strategy_reseed(s, b->r, SALT_SHIFT);
	for (size_t d = 0; d < s->dims; d++)
		b->shift[d] = gsl_rng_uniform(b->r);
	gp_hyper_get(b->g, b->theta);
	return 0;
oom:
	snprintf(err, errlen, "out of memory creating strategy bo");
	return -1;
}

static void bo_destroy(strategy *s)
{
	struct bo *b = s->impl;

	if (!b)
		return;
	gp_destroy(b->g);
	for (size_t d = 0; d < SPACE_MAX_DIMS; d++)
		free(b->coord[d]);
	if (b->r)
		gsl_rng_free(b->r);
	free(b->x);
	free(b->y);
	free(b->row_obs);
	free(b->in_model);
	free(b->work);
	free(b->c);
	free(b->order);
	pointmap_free(&b->cset);
	free(b);
}

/* ---- initial design ---- */

static int bo_initial(strategy *s, struct bo *b, struct point *out)
{
	gsl_qrng *q = gsl_qrng_alloc(gsl_qrng_sobol, (unsigned)(s->dims ? s->dims : 1));
	double u[SPACE_MAX_DIMS];
	int rc = 1;

	if (!q)
		return -1;
	for (int i = 0; i < BO_SOBOL_WALK && rc == 1; i++) {
		struct point p;

		if (gsl_qrng_get(q, u) != 0)
			break;
		memset(&p, 0, sizeof p);
		for (size_t d = 0; d < s->dims; d++) {
			double v = u[d] + b->shift[d];
			size_t n = space_levels(s->sp, d), l;

			v -= floor(v);
			l = (size_t)(v * (double)n);
			p.lv[d] = (uint32_t)(l < n ? l : n - 1);
		}
		if (strategy_eligible(s, &p)) {
			*out = p;
			rc = 0;
		}
	}
	gsl_qrng_free(q);
	return rc;
}

/* ---- model ---- */

static int reserve(struct bo *b, size_t n, size_t dims)
{
	double *nx, *ny, *nw;
	size_t *nr;
	unsigned char *ni;

	if (n <= b->cap)
		return 0;
	n += n / 2 + 16;
	nx = realloc(b->x, n * (dims ? dims : 1) * sizeof *nx);
	if (!nx)
		return -1;
	b->x = nx;
	ny = realloc(b->y, n * sizeof *ny);
	if (!ny)
		return -1;
	b->y = ny;
	nw = realloc(b->work, n * sizeof *nw);
	if (!nw)
		return -1;
	b->work = nw;
	nr = realloc(b->row_obs, n * sizeof *nr);
	if (!nr)
		return -1;
	b->row_obs = nr;
	ni = realloc(b->in_model, n);
	if (!ni)
		return -1;
	b->in_model = ni;
	b->cap = n;
	return 0;
}

static bool need_fit(const struct bo *b, size_t n)
{
	if (!b->fitted)
		return true;
	if (n < 30)
		return n != b->fit_n;
	return n >= b->fit_n + (n < 100 ? 5 : 10);
}

/* Sort idx[0..n) by key[idx[i]], increasing (decreasing when `desc`), keeping the
 * order of equal keys: a bottom-up merge sort through tmp (n entries), without qsort_r;
 * n is the number of successes, thousands in a long session. */
static void sort_idx(size_t *idx, size_t *tmp, size_t n, const double *key, bool desc)
{
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi) {
				double a = key[idx[i]], c = key[idx[j]];
				bool take_j = desc ? c > a : c < a;

				tmp[k++] = take_j ? idx[j++] : idx[i++];
			}
			while (i < mid)
				tmp[k++] = idx[i++];
			while (j < hi)
				tmp[k++] = idx[j++];
		}
		memcpy(idx, tmp, n * sizeof *idx);
	}
}

/* Row indices 0..n-1 by y, increasing, ties by index (into idx, with tmp scratch). */
static void sort_rows_by_y(size_t *idx, size_t *tmp, size_t n, const double *y)
{
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	sort_idx(idx, tmp, n, y, false);
}

/* Fit hyperparameters to the n standardised points in b->x, b->y, starting from
 * theta (in/out). A fit depends only on the data, the start and whether it is the
 * first, so the result is memoised. 0, or -1 when out of memory. */
static int bo_fit(strategy *s, struct bo *b, size_t n, double *theta)
{
	size_t m = n, dims = s->dims, nh = gp_hyper_count(b->g);
	double *fx = NULL, *fy = NULL;
	size_t *idx = NULL;
	char err[256];
	int rc = -1;

	if (b->memo_valid && b->memo_n == n && b->memo_warm == b->fitted &&
	    memcmp(b->memo_from, theta, nh * sizeof *theta) == 0) {
		memcpy(theta, b->memo_theta, nh * sizeof *theta);
		return 0;
	}
	b->memo_valid = false;
	memcpy(b->memo_from, theta, nh * sizeof *theta);

	if (n > BO_FIT_MAX_POINTS) {
		size_t half = BO_FIT_MAX_POINTS / 2, rest = n - half;

		m = BO_FIT_MAX_POINTS;
		idx = malloc(2 * n * sizeof *idx);
		fx = malloc(m * dims * sizeof *fx);
		fy = malloc(m * sizeof *fy);
		if (!idx || !fx || !fy)
			goto out;
		sort_rows_by_y(idx, idx + n, n, b->y);
		for (size_t k = 0; k < m; k++) {
			/* the best half, then the rest at an even stride (in y order) */
			size_t i = k < half ? idx[k] : idx[half + (k - half) * rest / (m - half)];

			memcpy(fx + k * dims, b->x + i * dims, dims * sizeof *fx);
			fy[k] = b->y[i];
		}
	}
	if (gp_set_data(b->g, fx ? fx : b->x, fy ? fy : b->y, m) < 0)
		goto out;
	if (m > b->st.fit_points_max)
		b->st.fit_points_max = m;
	gp_hyper_set(b->g, theta);
	/* a failed fit keeps the previous hyperparameters: still a usable model */
	if (gp_fit(b->g, b->fitted ? 40 : 80, err, sizeof err) == 0)
		gp_hyper_get(b->g, theta);
	memcpy(b->memo_theta, theta, nh * sizeof *theta);
	b->memo_n = n;
	b->memo_warm = b->fitted;
	b->memo_valid = true;
	rc = 0;
out:
	free(idx);
	free(fx);
	free(fy);
	return rc;
}

/* The GP's data when there are more than BO_MODEL_MAX_POINTS successes (see the header
 * comment): the BO_MODEL_BEST lowest y, then the BO_MODEL_LOCAL most correlated (under
 * the hyperparameters theta) with any of the BO_TOP_POINTS best distinct points, then
 * the rest at an even stride in y order; into b->mx, b->my in observation order, and
 * b->in_model. The number of points, or -1 when out of memory. */
static int model_subset(strategy *s, struct bo *b, size_t n, const double *theta)
{
	size_t dims = s->dims, *idx = malloc(3 * n * sizeof *idx), *tmp, *rest;
	size_t top[BO_TOP_POINTS], ntop = bo_top_points(s, top), k = 0, nrest = 0;
	size_t spread = BO_MODEL_MAX_POINTS - BO_MODEL_BEST - BO_MODEL_LOCAL;
	double *corr = malloc(n * sizeof *corr), xt[BO_TOP_POINTS][SPACE_MAX_DIMS];
	unsigned char *pick = b->in_model;
	int rc = -1;

	if (!idx || !corr)
		goto out;
	memset(pick, 0, n);
	tmp = idx + n;
	rest = idx + 2 * n;
	gp_hyper_set(b->g, theta);
	for (size_t t = 0; t < ntop; t++)
		bo_encode(s, &s->obs[top[t]].p, xt[t]);
	/* the best */
	sort_rows_by_y(idx, tmp, n, b->y);
	for (size_t i = 0; i < BO_MODEL_BEST; i++)
		pick[idx[i]] = 1;
	/* the nearest to the top points, by prior correlation */
	for (size_t i = 0; i < n; i++) {
		corr[i] = -1;
		for (size_t t = 0; t < ntop && !pick[i]; t++) {
			double c = gp_kernel(b->g, b->x + i * dims, xt[t]);

			corr[i] = c > corr[i] ? c : corr[i];
		}
		b->subset_kernels += pick[i] ? 0 : ntop;
	}
	for (size_t i = 0; i < n; i++) {
		if (!pick[i])
			rest[nrest++] = i;
	}
	sort_idx(rest, tmp, nrest, corr, true);
	for (size_t i = 0; i < BO_MODEL_LOCAL && i < nrest; i++)
		pick[rest[i]] = 1;
	/* a spread of the rest, in y order */
	nrest = 0;
	for (size_t i = 0; i < n; i++) {
		if (!pick[idx[i]])
			rest[nrest++] = idx[i];
	}
	for (size_t i = 0; i < spread && nrest > 0; i++)
		pick[rest[i * nrest / spread]] = 1;
	for (size_t i = 0; i < n; i++) {
		if (!pick[i])
			continue;
		memcpy(b->mx + k * dims, b->x + i * dims, dims * sizeof *b->mx);
		b->my[k++] = b->y[i];
	}
	rc = (int)k;
out:
	free(idx);
	free(corr);
	return rc;
}

/* Build the GP on every successful observation. `commit`: keep a refit's
 * hyperparameters as the strategy's (suggest); otherwise (a recommendation) use them
 * for this model only, so the strategy's state does not depend on when it was asked.
 * 0, -1 out of memory, 1 when the GP cannot be factorised (the caller falls back to a
 * random point, or to the measurements). */
static int bo_model(strategy *s, struct bo *b, bool commit)
{
	size_t n = 0, dims = s->dims;
	double mean = 0, var = 0, sd, theta[GP_MAX_HYPER];
	char err[256];

	if (reserve(b, s->nobs, dims) < 0)
		return -1;
	for (size_t i = 0; i < s->nobs; i++) {
		if (s->obs[i].cls != OUTCOME_OK)
			continue;
		bo_encode(s, &s->obs[i].p, b->x + n * dims);
		b->row_obs[n] = i;
		b->y[n++] = s->obs[i].y;
	}
	for (size_t i = 0; i < n; i++)
		mean += b->y[i] / (double)n;
	for (size_t i = 0; i < n; i++)
		var += (b->y[i] - mean) * (b->y[i] - mean) / (double)(n > 1 ? n - 1 : 1);
	sd = var > 1e-18 ? sqrt(var) : 1.0;
	b->best = INFINITY;
	for (size_t i = 0; i < n; i++) {
		b->y[i] = (b->y[i] - mean) / sd;
		b->best = b->y[i] < b->best ? b->y[i] : b->best;
	}
	b->ymean = mean;
	b->ysd = sd;
	memcpy(theta, b->theta, sizeof theta);
	if (need_fit(b, n)) {
		if (bo_fit(s, b, n, theta) < 0)
			return -1;
		if (commit) {
			memcpy(b->theta, theta, sizeof theta);
			b->fitted = true;
			b->fit_n = n;
		}
	}
	b->capped = n > BO_MODEL_MAX_POINTS;
	if (b->capped) {
		int m = model_subset(s, b, n, theta);

		if (m < 0 || gp_set_data(b->g, b->mx, b->my, (size_t)m) < 0)
			return -1;
	} else if (gp_set_data(b->g, b->x, b->y, n) < 0) {
		return -1;
	}
	gp_hyper_set(b->g, theta);
	b->st.models++;
	b->st.model_points = gp_size(b->g);
	b->st.model_successes = n;
	if (b->st.model_points > b->st.model_points_max)
		b->st.model_points_max = b->st.model_points;
	if (gp_factor(b->g, err, sizeof err) < 0)
		return 1;
	b->sigma_max = sqrt(gp_signal_var(b->g));
	return 0;
}

static int bo_suggest(strategy *s, struct point *out, char *err, size_t errlen)
{
	struct bo *b = s->impl;
	size_t nok = 0, starts[BO_LOCAL_STARTS], nstarts, best;
	unsigned long long k0;
	bool exhaustive;
	int rc;

	for (size_t i = 0; i < s->nobs; i++)
		nok += s->obs[i].cls == OUTCOME_OK;
	strategy_reseed(s, b->r, SALT_BO);
	if (s->seen.n < b->n_init || nok < 2) {
		rc = bo_initial(s, b, out);
		if (rc < 0)
			goto oom;
		if (rc == 0)
			return 0;
		return strategy_random_eligible(s, b->r, BO_RANDOM_TRIES, out, err, errlen);
	}
	k0 = kernels_now(b);
	b->st.exact_scores = 0;
	rc = bo_model(s, b, true);
	if (rc < 0)
		goto oom;
	if (rc > 0)   /* numerically hopeless model: explore instead */
		return strategy_random_eligible(s, b->r, BO_RANDOM_TRIES, out, err, errlen);
	if (bo_build_candidates(s, b, &exhaustive) < 0)
		goto oom;
	if (b->nc == 0)
		return strategy_random_eligible(s, b->r, BO_RANDOM_TRIES, out, err, errlen);
	best = bo_score_candidates(s, b, starts, &nstarts);
	if (best == SIZE_MAX)
		goto oom;
	for (size_t i = 0; !exhaustive && i < nstarts; i++) {
		size_t r = bo_local_search(s, b, starts[i]);

		if (r == SIZE_MAX)
			goto oom;
		if (b->c[r].score > b->c[best].score)
			best = r;
	}
	*out = b->c[best].p;
	b->st.candidates = b->nc;
	kernels_since(b, k0);
	return 0;
oom:
	snprintf(err, errlen, "bo: out of memory");
	return -1;
}

/* Past the cap, condition each estimate on the point's own successful runs that the
 * GP's subset left out (their mean, with noise variance noise / count): one Gaussian
 * update of the posterior at that point, so a point measured slow is not recommended on
 * its neighbours' strength. est[i] is the standardised posterior mean (in/out). 0, or -1
 * when out of memory. */
static int estimate_own_runs(strategy *s, struct bo *b, const struct point *p, size_t n,
                             double *est)
{
	struct pointmap qm;
	double *sum = calloc(n, sizeof *sum), noise = gp_noise_var(b->g);
	size_t *cnt = calloc(n, sizeof *cnt), nrows = b->st.model_successes;
	int rc = -1;

	pointmap_init(&qm, s->dims);
	if (!sum || !cnt)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (pointmap_put(&qm, &p[i], i) < 0)
			goto out;
	}
	for (size_t r = 0; r < nrows; r++) {
		size_t q;

		if (!b->in_model[r] && pointmap_get(&qm, &s->obs[b->row_obs[r]].p, &q)) {
			sum[q] += b->y[r];
			cnt[q]++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		double x[SPACE_MAX_DIMS], mu, var, nv;

		if (cnt[i] == 0)
			continue;
		bo_encode(s, &p[i], x);
		gp_predict(b->g, x, &mu, &var, b->work);
		nv = noise / (double)cnt[i];
		est[i] = mu + var / (var + nv) * (sum[i] / (double)cnt[i] - mu);
	}
	rc = 0;
out:
	pointmap_free(&qm);
	free(sum);
	free(cnt);
	return rc;
}

/* The GP posterior mean of log(objective) at each point: the recommendation. Needs a
 * model of at least 2 successful runs; else 1 (strategy.c uses the measurements). */
static int bo_estimate(strategy *s, const struct point *p, size_t n, double *est)
{
	struct bo *b = s->impl;
	size_t nok = 0;
	unsigned long long k0;
	int rc;

	for (size_t i = 0; i < s->nobs; i++)
		nok += s->obs[i].cls == OUTCOME_OK;
	if (nok < 2)
		return 1;
	k0 = kernels_now(b);
	rc = bo_model(s, b, false);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		double x[SPACE_MAX_DIMS];

		bo_encode(s, &p[i], x);
		est[i] = gp_predict_mean(b->g, x);
	}
	if (b->capped && estimate_own_runs(s, b, p, n, est) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		est[i] = b->ymean + b->ysd * est[i];
	kernels_since(b, k0);
	return 0;
}

const struct strategy_ops strategy_bo_ops = {
	.name = "bo",
	.create = bo_create,
	.destroy = bo_destroy,
	.suggest = bo_suggest,
	.observe = NULL,
	.estimate = bo_estimate,
};
