/* result.c - intervals for the final re-measurement, and results.json written to its
 * folder (write.c renders the document). */
#include "result/result.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"

void result_mean_ci(const double *x, size_t n, double *mean, double *lo, double *hi)
{
	double m = 0, ss = 0, half;

	for (size_t i = 0; i < n; i++)
		m += x[i];
	m /= (double)n;
	*mean = m;
	*lo = *hi = NAN;
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * sqrt(ss / (double)(n - 1) / (double)n);
	*lo = m - half;
	*hi = m + half;
}

void result_paired_gain(const double *base, const double *cand, size_t n, double *ratio,
                        double *lo, double *hi)
{
	double *lr = malloc(n * sizeof *lr), m, l, h;

	if (!lr) {
		/* Without scratch space fall back to the ratio of the first round. */
		*ratio = base[0] / cand[0];
		*lo = *hi = NAN;
		return;
	}
	for (size_t i = 0; i < n; i++)
		lr[i] = log(base[i] / cand[i]);
	result_mean_ci(lr, n, &m, &l, &h);
	*ratio = exp(m);
	*lo = isnan(l) ? NAN : exp(l);
	*hi = isnan(h) ? NAN : exp(h);
	free(lr);
}

int result_write(const char *dir, const struct summary *s, char *err, size_t errlen)
{
	char path[4096];
	char *text;
	int rc;

	if (snprintf(path, sizeof path, "%s/results.json", dir) >= (int)sizeof path)
		return fs_errf(err, errlen, "%s: path too long", dir);
	text = result_text(s);
	if (!text)
		return fs_errf(err, errlen, "%s: out of memory formatting the results", path);
	rc = fs_write_atomic(path, text, strlen(text), 0644, err, errlen);
	free(text);
	return rc;
}

