/* test_gp.c - the Gaussian process: Matern 5/2 values by hand, the mixed kernel
 * (categorical and unset inputs), posterior mean, variance and marginal likelihood on
 * tiny data against the closed form, analytic gradients against finite differences,
 * a fit that improves the posterior and predicts held-out points, and the cheap
 * variance bound the bo strategy prunes with (never below the exact variance). */
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "../check.h"
#include "search/gp.h"

static void test_matern(void)
{
	CHECK_NEAR(gp_matern52(0), 1, 1e-15);
	/* (1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r) */
	CHECK_NEAR(gp_matern52(0.5), 0.828649142418125, 1e-14);
	CHECK_NEAR(gp_matern52(1), 0.52399410883182, 1e-14);
	CHECK_NEAR(gp_matern52(2), 0.138660219138504, 1e-14);
	CHECK(gp_matern52(50) < 1e-40);
}

/* inputs: 0 ordinal (nullable), 1 categorical, 2 ordinal, 3 off */
static gp *mixed_gp(void)
{
	struct gp_shape sh = {.dims = 4};

	sh.kind[0] = GP_IN_ORDINAL;
	sh.nullable[0] = true;
	sh.kind[1] = GP_IN_CATEGORICAL;
	sh.kind[2] = GP_IN_ORDINAL;
	sh.kind[3] = GP_IN_OFF;
	return gp_create(&sh);
}

static void test_kernel(void)
{
	gp *g = mixed_gp();
	/* [log sf2, log l0, log l2, log w1, log v0, log noise] */
	double th[6] = {log(2.0), log(0.5), log(0.25), log(0.7), log(1.3), log(0.01)};
	double a[4] = {0.2, 0, 0.5, 0}, b[4] = {0.7, 1, 0.5, 3}, c[4] = {-1, 0, 0.75, 0};

	CHECK(g != NULL);
	if (!g)
		return;
	CHECK_INT(gp_hyper_count(g), 6);
	gp_hyper_set(g, th);
	/* r = 0.5 / 0.5 = 1, one categorical mismatch; input 3 ignored */
	CHECK_NEAR(gp_kernel(g, a, b), 2 * 0.52399410883182 * exp(-0.7), 1e-14);
	CHECK_NEAR(gp_kernel(g, a, a), 2, 1e-15);
	/* unset input 0 sits at 0.5 and pays v0: r^2 = (0.3/0.5)^2 + (0.25/0.25)^2 */
	CHECK_NEAR(gp_kernel(g, a, c), 2 * gp_matern52(sqrt(0.36 + 1)) * exp(-1.3), 1e-14);
	CHECK_NEAR(gp_kernel(g, c, c), 2, 1e-15);
	CHECK_NEAR(gp_kernel(g, a, c), gp_kernel(g, c, a), 0);
	/* clamping to the bounds */
	th[1] = 100;
	gp_hyper_set(g, th);
	gp_hyper_get(g, th);
	CHECK_NEAR(th[1], 3.0, 1e-12);
	gp_destroy(g);
	gp_destroy(NULL);
}

static void test_posterior(void)
{
	struct gp_shape sh = {.dims = 1, .kind = {GP_IN_ORDINAL}};
	gp *g = gp_create(&sh);
	double th[3] = {log(1.5), log(0.4), log(0.01)};
	double x[2] = {0.2, 0.6}, y[2] = {1.0, -0.5}, q = 0.4, mu, var, work[2];
	double k11, k12, det, i11, i12, i22, ks1, ks2, a1, a2;
	char err[256];

	if (!g)
		return;
	gp_hyper_set(g, th);
	CHECK_INT(gp_set_data(g, x, y, 2), 0);
	CHECK_INT(gp_factor(g, err, sizeof err), 0);
	gp_predict(g, &q, &mu, &var, work);
	/* closed form with the 2 x 2 inverse */
	k11 = 1.5 + 0.01;
	k12 = 1.5 * gp_matern52(0.4 / 0.4);
	det = k11 * k11 - k12 * k12;
	i11 = k11 / det, i12 = -k12 / det, i22 = k11 / det;
	ks1 = 1.5 * gp_matern52(0.2 / 0.4);
	ks2 = ks1;
	a1 = i11 * y[0] + i12 * y[1];
	a2 = i12 * y[0] + i22 * y[1];
	CHECK_NEAR(mu, ks1 * a1 + ks2 * a2, 1e-12);
	CHECK_NEAR(var, 1.5 - (ks1 * (i11 * ks1 + i12 * ks2) + ks2 * (i12 * ks1 + i22 * ks2)), 1e-12);
	/* and the numbers computed by hand once (python, double precision) */
	CHECK_NEAR(mu, 0.270683470721414, 1e-12);
	CHECK_NEAR(var, 0.154190244719628, 1e-12);
	CHECK_NEAR(gp_predict_mean(g, &q), mu, 1e-14);
	CHECK_NEAR(gp_log_marginal(g), -2.89612911871315, 1e-11);
	/* at a data point the mean is close to the data and the variance small */
	gp_predict(g, &x[0], &mu, &var, work);
	CHECK_NEAR(mu, 1.0, 0.02);
	CHECK(var < 0.02);
	/* far away: the prior */
	q = 50;
	gp_predict(g, &q, &mu, &var, work);
	CHECK_NEAR(mu, 0, 1e-12);
	CHECK_NEAR(var, 1.5, 1e-12);
	CHECK_NEAR(gp_signal_var(g), 1.5, 1e-12);
	gp_destroy(g);
}

static void test_gradient(void)
{
	gp *g = mixed_gp();
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double x[20 * 4], y[20], th[6], grad[6], gp_[6], gm[6];
	double base[6] = {log(1.2), log(0.3), log(0.6), log(0.5), log(0.8), log(0.05)};

	if (!g || !r)
		return;
	for (int i = 0; i < 20; i++) {
		x[i * 4 + 0] = i % 4 == 0 ? -1 : gsl_rng_uniform(r);
		x[i * 4 + 1] = (double)gsl_rng_uniform_int(r, 3);
		x[i * 4 + 2] = gsl_rng_uniform(r);
		x[i * 4 + 3] = 0;
		y[i] = sin(3 * x[i * 4 + 2]) + 0.3 * x[i * 4 + 1] + 0.1 * gsl_rng_uniform(r);
	}
	CHECK_INT(gp_set_data(g, x, y, 20), 0);
	gp_neg_log_posterior(g, base, grad);
	for (int i = 0; i < 6; i++) {
		double h = 1e-6, fp, fm;

		memcpy(th, base, sizeof th);
		th[i] += h;
		fp = gp_neg_log_posterior(g, th, gp_);
		th[i] -= 2 * h;
		fm = gp_neg_log_posterior(g, th, gm);
		CHECK_NEAR(grad[i], (fp - fm) / (2 * h), 1e-5 * (1 + fabs(grad[i])));
	}
	gsl_rng_free(r);
	gp_destroy(g);
}

static void test_fit(void)
{
	struct gp_shape sh = {.dims = 1, .kind = {GP_IN_ORDINAL}};
	gp *g = gp_create(&sh);
	double x[15], y[15], th[3], before, after, mu, var, work[15], q;
	char err[256];

	if (!g)
		return;
	for (int i = 0; i < 15; i++) {
		x[i] = i / 14.0;
		y[i] = sin(6 * x[i]);
	}
	CHECK_INT(gp_set_data(g, x, y, 15), 0);
	gp_hyper_get(g, th);
	before = gp_neg_log_posterior(g, th, NULL);
	CHECK_INT(gp_fit(g, 100, err, sizeof err), 0);
	gp_hyper_get(g, th);
	after = gp_neg_log_posterior(g, th, NULL);
	CHECK(after < before - 1);
	CHECK_INT(gp_factor(g, err, sizeof err), 0);
	for (int i = 0; i < 14; i++) {
		q = (i + 0.5) / 14.0;
		gp_predict(g, &q, &mu, &var, work);
		CHECK_NEAR(mu, sin(6 * q), 0.02);
		CHECK(var >= 0);
	}
	/* one point cannot be fitted */
	CHECK_INT(gp_set_data(g, x, y, 1), 0);
	CHECK_INT(gp_fit(g, 10, err, sizeof err), -1);
	CHECK_STR(err, "gp: 1 points, need 2 to fit");
	/* many copies of one point, tiny noise: still factorised, finite predictions */
	th[2] = -30;
	th[1] = 10;
	gp_hyper_set(g, th);
	for (int i = 0; i < 15; i++)
		x[i] = 0.5, y[i] = 1.0;
	CHECK_INT(gp_set_data(g, x, y, 15), 0);
	CHECK_INT(gp_factor(g, err, sizeof err), 0);
	q = 0.5;
	gp_predict(g, &q, &mu, &var, work);
	CHECK_NEAR(mu, 1.0, 1e-3);
	CHECK(isfinite(var) && var >= 0);
	/* no data: the prior */
	CHECK_INT(gp_set_data(g, x, y, 0), 0);
	CHECK_INT(gp_factor(g, err, sizeof err), 0);
	gp_predict(g, &q, &mu, &var, work);
	CHECK_NEAR(mu, 0, 0);
	CHECK_NEAR(var, gp_signal_var(g), 1e-12);
	gp_destroy(g);
}

/* gp_predict_mean_bound: the same mean as gp_predict_mean, a variance bound that the
 * exact variance never exceeds, tight at the data; the kernel count it adds. */
static void test_bound(void)
{
	gp *g = mixed_gp();
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double x[60 * 4], y[60], q[4], mu, var, mub, vub, work[60];
	double th[6] = {log(1.7), log(0.2), log(0.5), log(0.9), log(0.6), log(1e-5)};
	unsigned long long k0;
	char err[256];

	CHECK(g != NULL && r != NULL);
	if (!g || !r)
		goto out;
	for (int i = 0; i < 60; i++) {
		/* the last 10 repeat earlier points: a near-singular K without the noise */
		int src = i < 50 ? i : i - 50;

		x[i * 4 + 0] = src % 5 == 0 ? -1 : gsl_rng_uniform(r);
		x[i * 4 + 1] = (double)gsl_rng_uniform_int(r, 3);
		x[i * 4 + 2] = gsl_rng_uniform(r);
		x[i * 4 + 3] = 0;
		if (i >= 50)
			memcpy(x + i * 4, x + src * 4, 4 * sizeof *x);
		y[i] = sin(4 * x[i * 4 + 2]) + 0.5 * x[i * 4 + 1] + 0.05 * gsl_rng_uniform(r);
	}
	gp_hyper_set(g, th);
	CHECK_INT(gp_set_data(g, x, y, 60), 0);
	CHECK_INT(gp_factor(g, err, sizeof err), 0);
	for (int t = 0; t < 2000; t++) {
		if (t < 60) {
			memcpy(q, x + t * 4, sizeof q);   /* at the data */
		} else {
			q[0] = t % 7 == 0 ? -1 : gsl_rng_uniform(r);
			q[1] = (double)gsl_rng_uniform_int(r, 4);   /* 3: a level never seen */
			q[2] = gsl_rng_uniform(r);
			q[3] = 0;
		}
		gp_predict(g, q, &mu, &var, work);
		k0 = gp_kernel_count(g);
		gp_predict_mean_bound(g, q, &mub, &vub);
		CHECK_INT(gp_kernel_count(g) - k0, 60);
		CHECK(mub == mu);
		CHECK(mub == gp_predict_mean(g, q));
		CHECK(var <= vub);
		CHECK(vub <= gp_signal_var(g) * (1 + 1e-6) + 1e-300);
		if (t < 60)
			CHECK(vub < 1e-3 * gp_signal_var(g));   /* at a data point, with noise 1e-5 */
	}
	/* one data point: the bound is the exact variance (plus its slack) */
	CHECK_INT(gp_set_data(g, x, y, 1), 0);
	CHECK_INT(gp_factor(g, err, sizeof err), 0);
	memcpy(q, x + 4, sizeof q);
	gp_predict(g, q, &mu, &var, work);
	gp_predict_mean_bound(g, q, &mub, &vub);
	CHECK_NEAR(vub, var, 2e-6 * gp_signal_var(g));
out:
	if (r)
		gsl_rng_free(r);
	gp_destroy(g);
}

int main(void)
{
	test_matern();
	test_kernel();
	test_posterior();
	test_gradient();
	test_fit();
	test_bound();
	return check_status();
}
