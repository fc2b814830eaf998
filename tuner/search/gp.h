/* gp.h - a Gaussian-process surrogate over mixed ordinal and categorical inputs, used
 * by the bo strategy (private to tuner/).
 *
 * Inputs are the space's coordinates (space_coord): ordinal inputs in [0, 1] or -1 for
 * "unset", categorical inputs a level index. The kernel is
 *
 *   k(a, b) = sf2 * m52(r) * exp(-sum_c w_c [a_c != b_c] - sum_u v_u [unset(a_u) != unset(b_u)])
 *   r^2     = sum over ordinal inputs of ((a_d - b_d) / l_d)^2, an unset input at 0.5
 *   m52(r)  = (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)      (Matern 5/2)
 *
 * with ARD length scales l_d, a weight w_c per categorical input, a weight v_u per
 * ordinal input that can be unset (being unset is a categorical bit), plus a learned
 * noise variance on the diagonal. A product of positive definite kernels, so K is
 * positive definite whatever mix of set and unset levels the data holds. Hyperparameters live in log space, in the order
 * [log sf2, log l_d..., log w_c..., log v_u..., log noise], and are fitted by maximum
 * a posteriori (the marginal likelihood times weak log-normal priors, which keep a
 * handful of points from driving a length scale to a bound) with NLopt LD_LBFGS and
 * analytic gradients.
 *
 * gp_create turns GSL's abort-on-error handler off (gsl_set_error_handler_off, a
 * process-wide setting): a Cholesky factorisation that fails with GSL_EDOM is retried
 * here with growing jitter on the diagonal. */
#ifndef NCCLTUNE_GP_H
#define NCCLTUNE_GP_H

#include <stdbool.h>
#include <stddef.h>
#include "space/space.h"

#define GP_MAX_HYPER (2 + 3 * SPACE_MAX_DIMS)

enum gp_input { GP_IN_OFF, GP_IN_ORDINAL, GP_IN_CATEGORICAL };

struct gp_shape {
	size_t dims;
	enum gp_input kind[SPACE_MAX_DIMS];   /* GP_IN_OFF: ignored (one level) */
	bool nullable[SPACE_MAX_DIMS];        /* ordinal input that may be -1 */
};

typedef struct gp gp;

/* A GP with default hyperparameters and no data. NULL when out of memory. */
gp *gp_create(const struct gp_shape *shape);
void gp_destroy(gp *g);   /* accepts NULL */

/* Matern 5/2 correlation at scaled distance r >= 0. Can't fail. */
double gp_matern52(double r);

size_t gp_hyper_count(const gp *g);
void gp_hyper_default(const gp *g, double *theta);
void gp_hyper_bounds(const gp *g, double *lo, double *hi);
void gp_hyper_get(const gp *g, double *theta);
/* Set the hyperparameters (clamped to the bounds); call gp_factor before predicting. */
void gp_hyper_set(gp *g, const double *theta);

/* Prior covariance k(a, b) without noise. Can't fail. */
double gp_kernel(const gp *g, const double *a, const double *b);

/* Copy n observations: x row-major n x dims, y (already standardised by the caller).
 * Returns 0, or -1 when out of memory. */
int gp_set_data(gp *g, const double *x, const double *y, size_t n);
size_t gp_size(const gp *g);
/* Kernel evaluations since gp_create (K's entries in factorisations and gradients, one
 * per data point in each prediction): a measure of work that tests can bound without
 * timing anything. Can't fail. */
unsigned long long gp_kernel_count(const gp *g);

/* Factorise K + noise I (Cholesky, with jitter on GSL_EDOM) for the current data and
 * hyperparameters. Returns 0, or -1 with a message when even the largest jitter
 * fails. */
int gp_factor(gp *g, char *err, size_t errlen);

/* log p(y | hyperparameters), after gp_factor. */
double gp_log_marginal(const gp *g);

/* Fit the hyperparameters to the current data (MAP, see above), starting from the
 * current ones; at most maxeval likelihood evaluations. Leaves the best found set
 * (unfactorised: call gp_factor). Returns 0, or -1 with a message (the hyperparameters
 * are then unchanged). */
int gp_fit(gp *g, int maxeval, char *err, size_t errlen);

/* The fit's objective: -log p(y | theta) - log prior(theta) + const, and its
 * gradient (when grad is non-NULL) at theta (used as is, unclamped). Leaves theta
 * set; call gp_factor before predicting. 1e10 when K cannot be factorised. */
double gp_neg_log_posterior(gp *g, const double *theta, double *grad);

/* Posterior mean and latent variance (no noise) at x, after gp_factor. `work` holds
 * gp_size doubles. Can't fail. */
void gp_predict(const gp *g, const double *x, double *mu, double *var, double *work);
/* Posterior mean only (cheaper: no triangular solve). */
double gp_predict_mean(const gp *g, const double *x);
/* The posterior mean (the same value gp_predict_mean returns) and, at no extra cost,
 * an upper bound of the latent variance gp_predict would return: the variance given
 * the single data point most correlated with x, widened for round-off (gp.c). After
 * gp_factor. Can't fail. */
void gp_predict_mean_bound(const gp *g, const double *x, double *mu, double *var_ub);
/* Prior variance sf2: the largest latent variance any prediction can have. */
double gp_signal_var(const gp *g);
/* The noise variance of one observation (the fitted noise hyperparameter). */
double gp_noise_var(const gp *g);

#endif
