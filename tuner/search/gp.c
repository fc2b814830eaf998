/* gp.c - Gaussian-process regression for the bo strategy: the mixed Matern 5/2 x
 * categorical kernel, Cholesky factorisation with jitter, the MAP hyperparameter fit
 * (NLopt LD_LBFGS, analytic gradients) and fast posterior prediction. See gp.h. */
#include "search/gp.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <nlopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SQRT5 2.23606797749978969641
/* Where an unset ordinal input sits for the Matern factor: mid-range. Dropping the
 * input from r for such pairs instead would not give a positive definite kernel. */
#define GP_UNSET_COORD 0.5
#define LOG_2PI 1.83787706640934548356

/* Bounds and weak priors (mean, sd), all in log space. Inputs are in [0, 1] and the
 * caller standardises y, so these are scale-free. */
#define SF2_LO -4.6
#define SF2_HI 4.6
#define SF2_MEAN 0.0
#define LEN_LO -3.9     /* 0.02 */
#define LEN_HI 3.0      /* 20 */
#define LEN_MEAN -0.7   /* 0.5 */
#define W_LO -4.6       /* 0.01 */
#define W_HI 3.0        /* 20 */
#define W_MEAN 0.0
#define NOISE_LO -13.8  /* 1e-6 */
#define NOISE_HI 0.0
#define NOISE_MEAN -6.9 /* 1e-3 */
#define PRIOR_SD 1.5
#define NOISE_PRIOR_SD 2.5
/* jitter tried on GSL_EDOM, relative to sf2 */
static const double jitters[] = {0.0, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2};

struct gp {
	size_t dims;
	size_t nord, ncat;
	size_t ord[SPACE_MAX_DIMS];      /* input index of each ordinal input */
	size_t cat[SPACE_MAX_DIMS];      /* input index of each categorical input */
	int null_slot[SPACE_MAX_DIMS];   /* per ordinal input: its v index or -1 */
	size_t nnull;
	size_t nhyper;
	double theta[GP_MAX_HYPER];
	/* derived from theta */
	double sf2, noise;
	double len[SPACE_MAX_DIMS], w[SPACE_MAX_DIMS], wnull[SPACE_MAX_DIMS];
	/* data */
	size_t n, cap;
	double *x, *y;
	/* factorisation: L (lower triangle of K), alpha = K^-1 y; scaled inputs */
	double *kmat, *kinv, *alpha, *xo, *xn, *xc;
	double logdet;
	double diag_add;   /* noise + jitter on K's diagonal in the last factorisation */
	bool factored;
	/* kernel evaluations so far: a statistic, not state (so it lives behind a pointer
	 * that const functions such as the predictions may still count through) */
	unsigned long long *kernels;
};

double gp_matern52(double r)
{
	return (1.0 + SQRT5 * r + 5.0 / 3.0 * r * r) * exp(-SQRT5 * r);
}

static size_t idx_len(const gp *g, size_t k)
{
	return 1 + k;
}

static size_t idx_w(const gp *g, size_t k)
{
	return 1 + g->nord + k;
}

static size_t idx_null(const gp *g, size_t k)
{
	return 1 + g->nord + g->ncat + k;
}

static size_t idx_noise(const gp *g)
{
	return g->nhyper - 1;
}

static void hyper_derive(gp *g)
{
	g->sf2 = exp(g->theta[0]);
	for (size_t k = 0; k < g->nord; k++) {
		g->len[k] = exp(g->theta[idx_len(g, k)]);
		g->wnull[k] = g->null_slot[k] >= 0 ? exp(g->theta[idx_null(g, (size_t)g->null_slot[k])])
		                                   : 0.0;
	}
	for (size_t k = 0; k < g->ncat; k++)
		g->w[k] = exp(g->theta[idx_w(g, k)]);
	g->noise = exp(g->theta[idx_noise(g)]);
	g->factored = false;
}

gp *gp_create(const struct gp_shape *shape)
{
	gp *g = calloc(1, sizeof *g);

	if (!g)
		return NULL;
	g->kernels = calloc(1, sizeof *g->kernels);
	if (!g->kernels) {
		free(g);
		return NULL;
	}
	gsl_set_error_handler_off();
	g->dims = shape->dims;
	for (size_t d = 0; d < shape->dims && d < SPACE_MAX_DIMS; d++) {
		if (shape->kind[d] == GP_IN_ORDINAL) {
			g->null_slot[g->nord] = shape->nullable[d] ? (int)g->nnull++ : -1;
			g->ord[g->nord++] = d;
		} else if (shape->kind[d] == GP_IN_CATEGORICAL) {
			g->cat[g->ncat++] = d;
		}
	}
	g->nhyper = 2 + g->nord + g->ncat + g->nnull;
	gp_hyper_default(g, g->theta);
	hyper_derive(g);
	return g;
}

void gp_destroy(gp *g)
{
	if (!g)
		return;
	free(g->x);
	free(g->y);
	free(g->kmat);
	free(g->kinv);
	free(g->alpha);
	free(g->xo);
	free(g->xn);
	free(g->xc);
	free(g->kernels);
	free(g);
}

size_t gp_hyper_count(const gp *g)
{
	return g->nhyper;
}

void gp_hyper_default(const gp *g, double *theta)
{
	theta[0] = SF2_MEAN;
	for (size_t k = 0; k < g->nord; k++)
		theta[idx_len(g, k)] = LEN_MEAN;
	for (size_t k = 0; k < g->ncat; k++)
		theta[idx_w(g, k)] = W_MEAN;
	for (size_t k = 0; k < g->nnull; k++)
		theta[idx_null(g, k)] = W_MEAN;
	theta[idx_noise(g)] = NOISE_MEAN;
}

/* Per hyperparameter: bounds and prior. */
static void hyper_spec(const gp *g, size_t i, double *lo, double *hi, double *mean, double *sd)
{
	*sd = PRIOR_SD;
	if (i == 0) {
		*lo = SF2_LO, *hi = SF2_HI, *mean = SF2_MEAN;
	} else if (i < 1 + g->nord) {
		*lo = LEN_LO, *hi = LEN_HI, *mean = LEN_MEAN;
	} else if (i < idx_noise(g)) {
		*lo = W_LO, *hi = W_HI, *mean = W_MEAN;
	} else {
		*lo = NOISE_LO, *hi = NOISE_HI, *mean = NOISE_MEAN;
		*sd = NOISE_PRIOR_SD;
	}
}

void gp_hyper_bounds(const gp *g, double *lo, double *hi)
{
	double mean, sd;

	for (size_t i = 0; i < g->nhyper; i++)
		hyper_spec(g, i, &lo[i], &hi[i], &mean, &sd);
}

void gp_hyper_get(const gp *g, double *theta)
{
	memcpy(theta, g->theta, g->nhyper * sizeof *theta);
}

void gp_hyper_set(gp *g, const double *theta)
{
	for (size_t i = 0; i < g->nhyper; i++) {
		double lo, hi, mean, sd, t = theta[i];

		hyper_spec(g, i, &lo, &hi, &mean, &sd);
		g->theta[i] = isnan(t) ? mean : t < lo ? lo : t > hi ? hi : t;
	}
	hyper_derive(g);
}

double gp_signal_var(const gp *g)
{
	return g->sf2;
}

double gp_noise_var(const gp *g)
{
	return g->noise;
}

size_t gp_size(const gp *g)
{
	return g->n;
}

unsigned long long gp_kernel_count(const gp *g)
{
	return *g->kernels;
}

/* The pieces of k(a, b): squared scaled distance r2 and the categorical exponent e;
 * s[k] gets each ordinal input's share of r2 and mis[] the mismatch indicators
 * (categorical first, then unset bits), when non-NULL. */
static void kernel_parts(const gp *g, const double *a, const double *b, double *r2,
                         double *e, double *s, double *mis)
{
	double rr = 0, ee = 0;

	for (size_t k = 0; k < g->nord; k++) {
		double x = a[g->ord[k]], y = b[g->ord[k]], t;
		bool nx = x < 0, ny = y < 0;

		if (g->null_slot[k] >= 0 && mis)
			mis[g->ncat + (size_t)g->null_slot[k]] = nx != ny;
		if (nx != ny)
			ee += g->wnull[k];
		t = ((nx ? GP_UNSET_COORD : x) - (ny ? GP_UNSET_COORD : y)) / g->len[k];
		rr += t * t;
		if (s)
			s[k] = t * t;
	}
	for (size_t k = 0; k < g->ncat; k++) {
		bool m = a[g->cat[k]] != b[g->cat[k]];

		if (m)
			ee += g->w[k];
		if (mis)
			mis[k] = m;
	}
	*r2 = rr;
	*e = ee;
}

double gp_kernel(const gp *g, const double *a, const double *b)
{
	double r2, e;

	kernel_parts(g, a, b, &r2, &e, NULL, NULL);
	return g->sf2 * gp_matern52(sqrt(r2)) * exp(-e);
}

int gp_set_data(gp *g, const double *x, const double *y, size_t n)
{
	if (n > g->cap) {
		size_t cap = n < 32 ? 32 : n + n / 2;
		double *nx = realloc(g->x, cap * (g->dims ? g->dims : 1) * sizeof *nx);
		double *ny, *nk, *ni, *na, *no, *nn, *nc;

		if (!nx)
			return -1;
		g->x = nx;
		ny = realloc(g->y, cap * sizeof *ny);
		if (!ny)
			return -1;
		g->y = ny;
		nk = realloc(g->kmat, cap * cap * sizeof *nk);
		if (!nk)
			return -1;
		g->kmat = nk;
		ni = realloc(g->kinv, cap * cap * sizeof *ni);
		if (!ni)
			return -1;
		g->kinv = ni;
		na = realloc(g->alpha, cap * sizeof *na);
		if (!na)
			return -1;
		g->alpha = na;
		no = realloc(g->xo, cap * (g->nord ? g->nord : 1) * sizeof *no);
		if (!no)
			return -1;
		g->xo = no;
		nn = realloc(g->xn, cap * (g->nord ? g->nord : 1) * sizeof *nn);
		if (!nn)
			return -1;
		g->xn = nn;
		nc = realloc(g->xc, cap * (g->ncat ? g->ncat : 1) * sizeof *nc);
		if (!nc)
			return -1;
		g->xc = nc;
		g->cap = cap;
	}
	if (n > 0) {
		memcpy(g->x, x, n * g->dims * sizeof *x);
		memcpy(g->y, y, n * sizeof *y);
	}
	g->n = n;
	g->factored = false;
	return 0;
}

/* Build K + (noise + jitter) I in kmat and factorise it in place; compute alpha and
 * log det. Returns 0 or -1 (not positive definite even with the largest jitter). */
static int factor(gp *g)
{
	size_t n = g->n;
	gsl_matrix_view K;
	gsl_vector_view yv, av;

	if (n == 0) {
		g->logdet = 0;
		g->factored = true;
		return 0;
	}
	K = gsl_matrix_view_array(g->kmat, n, n);
	yv = gsl_vector_view_array(g->y, n);
	av = gsl_vector_view_array(g->alpha, n);
	for (size_t t = 0; t < sizeof jitters / sizeof jitters[0]; t++) {
		*g->kernels += n * (n + 1) / 2;
		for (size_t i = 0; i < n; i++) {
			for (size_t j = 0; j <= i; j++) {
				double k = gp_kernel(g, g->x + i * g->dims, g->x + j * g->dims);

				g->kmat[i * n + j] = k;
				g->kmat[j * n + i] = k;
			}
			g->kmat[i * n + i] += g->noise + jitters[t] * g->sf2;
		}
		if (gsl_linalg_cholesky_decomp1(&K.matrix) != GSL_SUCCESS)
			continue;   /* GSL_EDOM: not positive definite; more jitter */
		if (gsl_linalg_cholesky_solve(&K.matrix, &yv.vector, &av.vector) != GSL_SUCCESS)
			continue;
		g->logdet = 0;
		for (size_t i = 0; i < n; i++)
			g->logdet += 2.0 * log(g->kmat[i * n + i]);
		g->diag_add = g->noise + jitters[t] * g->sf2;
		g->factored = true;
		return 0;
	}
	return -1;
}

int gp_factor(gp *g, char *err, size_t errlen)
{
	if (factor(g) < 0) {
		snprintf(err, errlen, "gp: covariance of %zu points not positive definite even "
		         "with jitter %g", g->n, jitters[sizeof jitters / sizeof jitters[0] - 1]);
		return -1;
	}
	/* scaled inputs for the prediction loop */
	for (size_t i = 0; i < g->n; i++) {
		const double *xi = g->x + i * g->dims;

		for (size_t k = 0; k < g->nord; k++) {
			double v = xi[g->ord[k]];

			g->xo[i * g->nord + k] = (v < 0 ? GP_UNSET_COORD : v) / g->len[k];
			g->xn[i * g->nord + k] = v < 0;
		}
		for (size_t k = 0; k < g->ncat; k++)
			g->xc[i * g->ncat + k] = xi[g->cat[k]];
	}
	return 0;
}

double gp_log_marginal(const gp *g)
{
	double q = 0;

	for (size_t i = 0; i < g->n; i++)
		q += g->y[i] * g->alpha[i];
	return -0.5 * q - 0.5 * g->logdet - 0.5 * (double)g->n * LOG_2PI;
}

/* ---- prediction ---- */

static void scale_query(const gp *g, const double *x, double *qo, double *qn, double *qc)
{
	for (size_t k = 0; k < g->nord; k++) {
		double v = x[g->ord[k]];

		qo[k] = (v < 0 ? GP_UNSET_COORD : v) / g->len[k];
		qn[k] = v < 0;
	}
	for (size_t k = 0; k < g->ncat; k++)
		qc[k] = x[g->cat[k]];
}

static double kernel_scaled(const gp *g, const double *qo, const double *qn,
                            const double *qc, size_t i)
{
	const double *xo = g->xo + i * g->nord, *xn = g->xn + i * g->nord;
	const double *xc = g->xc + i * g->ncat;
	double r2 = 0, e = 0, r;

	for (size_t k = 0; k < g->nord; k++) {
		r2 += (qo[k] - xo[k]) * (qo[k] - xo[k]);
		if (qn[k] != xn[k])
			e += g->wnull[k];
	}
	for (size_t k = 0; k < g->ncat; k++) {
		if (qc[k] != xc[k])
			e += g->w[k];
	}
	r = sqrt(r2);
	return g->sf2 * (1.0 + SQRT5 * r + 5.0 / 3.0 * r2) * exp(-SQRT5 * r - e);
}

double gp_predict_mean(const gp *g, const double *x)
{
	double qo[SPACE_MAX_DIMS], qn[SPACE_MAX_DIMS], qc[SPACE_MAX_DIMS], mu = 0;

	scale_query(g, x, qo, qn, qc);
	*g->kernels += g->n;
	for (size_t i = 0; i < g->n; i++)
		mu += kernel_scaled(g, qo, qn, qc, i) * g->alpha[i];
	return mu;
}

/* The bound: conditioning on fewer points never lowers the posterior variance, so the
 * variance given the data point most correlated with x alone, sf2 - k^2 / (sf2 + d)
 * (d the noise and jitter of K's diagonal), bounds the variance given all of them. The
 * computed variance carries round-off from the factorisation and the triangular solve,
 * so the bound is widened by GP_VAR_BOUND_SLACK sf2. */
#define GP_VAR_BOUND_SLACK 1e-6

void gp_predict_mean_bound(const gp *g, const double *x, double *mu, double *var_ub)
{
	double qo[SPACE_MAX_DIMS], qn[SPACE_MAX_DIMS], qc[SPACE_MAX_DIMS], m = 0, kmax = 0, v;

	scale_query(g, x, qo, qn, qc);
	*g->kernels += g->n;
	for (size_t i = 0; i < g->n; i++) {
		double k = kernel_scaled(g, qo, qn, qc, i);

		m += k * g->alpha[i];
		kmax = k > kmax ? k : kmax;
	}
	v = g->sf2 - kmax * kmax / (g->sf2 + g->diag_add);
	*mu = m;
	*var_ub = (v > 0 ? v : 0) + GP_VAR_BOUND_SLACK * g->sf2;
}

void gp_predict(const gp *g, const double *x, double *mu, double *var, double *work)
{
	double qo[SPACE_MAX_DIMS], qn[SPACE_MAX_DIMS], qc[SPACE_MAX_DIMS], m = 0, vv = 0;
	size_t n = g->n;

	scale_query(g, x, qo, qn, qc);
	*g->kernels += n;
	for (size_t i = 0; i < n; i++) {
		work[i] = kernel_scaled(g, qo, qn, qc, i);
		m += work[i] * g->alpha[i];
	}
	/* forward substitution L v = k, in place; var = sf2 - |v|^2 */
	for (size_t i = 0; i < n; i++) {
		const double *row = g->kmat + i * n;
		double s = work[i];

		for (size_t j = 0; j < i; j++)
			s -= row[j] * work[j];
		work[i] = s / row[i];
		vv += work[i] * work[i];
	}
	*mu = m;
	*var = g->sf2 - vv > 1e-12 * g->sf2 ? g->sf2 - vv : 1e-12 * g->sf2;
}

/* ---- hyperparameter fit ---- */

double gp_neg_log_posterior(gp *g, const double *theta, double *grad)
{
	size_t n = g->n, nh = g->nhyper;
	double nlp, s[SPACE_MAX_DIMS], mis[2 * SPACE_MAX_DIMS];
	gsl_matrix_view Ki;

	memcpy(g->theta, theta, nh * sizeof *theta);
	hyper_derive(g);
	if (factor(g) < 0) {
		if (grad)
			memset(grad, 0, nh * sizeof *grad);
		return 1e10;
	}
	nlp = -gp_log_marginal(g);
	for (size_t i = 0; i < nh; i++) {
		double lo, hi, mean, sd;

		hyper_spec(g, i, &lo, &hi, &mean, &sd);
		nlp += 0.5 * (theta[i] - mean) * (theta[i] - mean) / (sd * sd);
		if (grad)
			grad[i] = (theta[i] - mean) / (sd * sd);
	}
	if (!grad)
		return nlp;
	*g->kernels += n * (n + 1) / 2;
	/* dNLL/dtheta = -1/2 tr((alpha alpha^T - K^-1) dK/dtheta) */
	memcpy(g->kinv, g->kmat, n * n * sizeof *g->kinv);
	Ki = gsl_matrix_view_array(g->kinv, n, n);
	if (gsl_linalg_cholesky_invert(&Ki.matrix) != GSL_SUCCESS) {
		memset(grad, 0, nh * sizeof *grad);
		return nlp;
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j <= i; j++) {
			double wij = g->alpha[i] * g->alpha[j] - g->kinv[i * n + j];
			double f = (i == j ? 0.5 : 1.0) * wij, r2, e, r, k, dl;

			kernel_parts(g, g->x + i * g->dims, g->x + j * g->dims, &r2, &e, s, mis);
			r = sqrt(r2);
			k = g->sf2 * gp_matern52(r) * exp(-e);
			grad[0] -= f * k;
			/* dk/dlog l_d = (5/3) sf2 e^-E (1 + sqrt5 r) e^(-sqrt5 r) s_d */
			dl = 5.0 / 3.0 * g->sf2 * exp(-e) * (1.0 + SQRT5 * r) * exp(-SQRT5 * r);
			for (size_t q = 0; q < g->nord; q++)
				grad[idx_len(g, q)] -= f * dl * s[q];
			for (size_t q = 0; q < g->ncat; q++) {
				if (mis[q])
					grad[idx_w(g, q)] += f * k * g->w[q];
			}
			for (size_t q = 0; q < g->nord; q++) {
				int u = g->null_slot[q];

				if (u >= 0 && mis[g->ncat + (size_t)u])
					grad[idx_null(g, (size_t)u)] += f * k * g->wnull[q];
			}
			if (i == j)
				grad[idx_noise(g)] -= f * g->noise;
		}
	}
	return nlp;
}

static double fit_objective(unsigned nt, const double *theta, double *grad, void *data)
{
	(void)nt;
	return gp_neg_log_posterior(data, theta, grad);
}

int gp_fit(gp *g, int maxeval, char *err, size_t errlen)
{
	double lo[GP_MAX_HYPER], hi[GP_MAX_HYPER], x[GP_MAX_HYPER], start[GP_MAX_HYPER], f;
	nlopt_opt opt = NULL;
	nlopt_result res;
	int rc = -1;

	if (g->n < 2) {
		snprintf(err, errlen, "gp: %zu points, need 2 to fit", g->n);
		return -1;
	}
	gp_hyper_bounds(g, lo, hi);
	gp_hyper_get(g, start);
	memcpy(x, start, g->nhyper * sizeof *x);
	opt = nlopt_create(NLOPT_LD_LBFGS, (unsigned)g->nhyper);
	if (!opt) {
		snprintf(err, errlen, "gp: nlopt_create failed (out of memory)");
		goto out;
	}
	if (nlopt_set_lower_bounds(opt, lo) < 0 || nlopt_set_upper_bounds(opt, hi) < 0 ||
	    nlopt_set_min_objective(opt, fit_objective, g) < 0 ||
	    nlopt_set_maxeval(opt, maxeval) < 0 || nlopt_set_ftol_rel(opt, 1e-7) < 0 ||
	    nlopt_set_xtol_abs1(opt, 1e-4) < 0) {
		snprintf(err, errlen, "gp: configuring NLopt failed: %s", nlopt_get_errmsg(opt));
		goto out;
	}
	res = nlopt_optimize(opt, x, &f);
	/* L-BFGS often ends on round-off near the optimum; x is still the best point */
	if (res < 0 && res != NLOPT_ROUNDOFF_LIMITED) {
		snprintf(err, errlen, "gp: hyperparameter fit failed (NLopt %d): %s", (int)res,
		         nlopt_get_errmsg(opt) ? nlopt_get_errmsg(opt) : "no message");
		gp_hyper_set(g, start);
		goto out;
	}
	if (!isfinite(f) || f >= 1e10) {
		snprintf(err, errlen, "gp: hyperparameter fit found no usable point");
		gp_hyper_set(g, start);
		goto out;
	}
	gp_hyper_set(g, x);
	rc = 0;
out:
	nlopt_destroy(opt);
	return rc;
}
