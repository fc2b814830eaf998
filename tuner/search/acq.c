/* acq.c - expected improvement (plain and log) and the feasibility-weighted score. */
#include "search/acq.h"

#include <math.h>

#define LOG_SQRT_2PI 0.91893853320467274178
#define FEAS_FLOOR 1e-12

/* Standard normal density and upper tail, without GSL's error machinery (these
 * functions are called millions of times and cannot fail for finite z). */
static double norm_pdf(double z)
{
	return exp(-0.5 * z * z - LOG_SQRT_2PI);
}

static double norm_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

double acq_ei(double mu, double sigma, double best)
{
	double z;

	if (!(sigma > 0))
		return best > mu ? best - mu : 0.0;
	z = (best - mu) / sigma;
	return (best - mu) * norm_cdf(z) + sigma * norm_pdf(z);
}

/* log(z Phi(z) + phi(z)) */
static double log_h(double z)
{
	double x, tail;

	if (z > -1.0)
		return log(z * norm_cdf(z) + norm_pdf(z));
	x = -z;
	if (x <= 25.0) {
		/* 1 - x R(x), R(x) = Phi(-x) / phi(x): no cancellation worth the name here */
		tail = 1.0 - x * (norm_cdf(-x) / norm_pdf(x));
	} else {
		/* 1 - x R(x) = x^-2 - 3 x^-4 + 15 x^-6 - 105 x^-8 + 945 x^-10 ... */
		double u = 1.0 / (x * x);

		tail = u * (1.0 - u * (3.0 - u * (15.0 - u * (105.0 - 945.0 * u))));
	}
	return -0.5 * z * z - LOG_SQRT_2PI + log(tail);
}

double acq_log_ei(double mu, double sigma, double best)
{
	if (!(sigma > 0))
		return best > mu ? log(best - mu) : -INFINITY;
	return log(sigma) + log_h((best - mu) / sigma);
}

double acq_score(double mu, double sigma, double best, double feasibility)
{
	return acq_log_ei(mu, sigma, best) +
	       log(feasibility > FEAS_FLOOR ? feasibility : FEAS_FLOOR);
}
