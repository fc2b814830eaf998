/* guardstat.c - the pooled noise model of a session and the paired, interleaved verdict
 * of a candidate against the baseline (guardstat.h says the model). */
#include "result/guardstat.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>

void guardstat_pool_init(struct guardstat_pool *p)
{
	p->ss = 0;
	p->dof = 0;
	p->configs = 0;
}

static int check_latencies(const char *what, const double *us, size_t n, char *err,
                           size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(us[i]) || us[i] <= 0) {
			snprintf(err, errlen, "%s[%zu]: latency %g us is not a positive finite number",
			         what, i, us[i]);
			return -1;
		}
	}
	return 0;
}

int guardstat_pool_add(struct guardstat_pool *p, const double *us, size_t n, char *err,
                       size_t errlen)
{
	double mean = 0, ss = 0;

	if (check_latencies("repeat", us, n, err, errlen) < 0)
		return -1;
	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		mean += log(us[i]);
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (log(us[i]) - mean) * (log(us[i]) - mean);
	p->ss += ss;
	p->dof += (int)(n - 1);
	p->configs++;
	return 0;
}

double guardstat_pool_sd(const struct guardstat_pool *p)
{
	return p->dof > 0 ? sqrt(p->ss / p->dof) : NAN;
}

const char *guardstat_call_name(enum guardstat_call c)
{
	return c == GUARDSTAT_SAFE ? "safe" : c == GUARDSTAT_UNSAFE ? "unsafe" : "undecided";
}

/* Half-width on the log scale of the interval of a mean of n paired differences, each of
 * variance 2 s^2, with dof degrees of freedom in s. */
static double half_width(double sd, int dof, size_t n, double q)
{
	return gsl_cdf_tdist_Pinv(q, (double)dof) * sqrt(2.0 * sd * sd / (double)n);
}

/* Rounds beyond n after which the half-width falls below gap (the distance of the mean
 * from the allowed ratio, log scale), each round adding 2 degrees of freedom; -1 when
 * more than GUARDSTAT_MAX_ROUNDS would be needed. */
static int rounds_to_decide(double sd, int dof, size_t n, double q, double gap)
{
	for (int more = 1; more <= GUARDSTAT_MAX_ROUNDS; more++)
		if (half_width(sd, dof + 2 * more, n + (size_t)more, q) < gap)
			return more;
	return -1;
}

int guardstat_compare(const struct guardstat_pool *p, const double *base, const double *cand,
                      size_t n, double allowed, double level, struct guardstat_verdict *out,
                      char *err, size_t errlen)
{
	double mean = 0, half, sd, la;

	if (n < 1) {
		snprintf(err, errlen, "rounds: none (at least one paired round is needed)");
		return -1;
	}
	if (check_latencies("base", base, n, err, errlen) < 0 ||
	    check_latencies("cand", cand, n, err, errlen) < 0)
		return -1;
	if (!isfinite(allowed) || allowed <= 0) {
		snprintf(err, errlen, "allowed ratio %g: not a positive finite number", allowed);
		return -1;
	}
	if (!(level > 0 && level < 1)) {
		snprintf(err, errlen, "confidence level %g: not within (0, 1)", level);
		return -1;
	}
	if (p->dof < 1) {
		snprintf(err, errlen, "noise model: no configuration was measured twice at this "
		         "size (no degree of freedom)");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		mean += log(cand[i] / base[i]);
	mean /= (double)n;
	sd = guardstat_pool_sd(p);
	half = half_width(sd, p->dof, n, (1 + level) / 2);
	la = log(allowed);
	out->ratio = exp(mean);
	out->lo = exp(mean - half);
	out->hi = exp(mean + half);
	out->sd = sd;
	out->dof = p->dof;
	out->rounds = (int)n;
	out->more_rounds = 0;
	if (mean + half <= la) {
		out->call = GUARDSTAT_SAFE;
	} else if (mean - half > la) {
		out->call = GUARDSTAT_UNSAFE;
	} else {
		out->call = GUARDSTAT_UNDECIDED;
		out->more_rounds = rounds_to_decide(sd, p->dof, n, (1 + level) / 2, fabs(mean - la));
	}
	return 0;
}
