/* bench_stats.c - clocks, medians and option parsing shared by the benchmarks. */
#include "bench_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fsutil.h"

static double clock_s(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_thread_cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

double bench_wall_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof *v, cmp_double);
	if (n % 2)
		return v[n / 2];
	/* the mean of two middle values, except that inf + finite stays inf */
	if (isinf(v[n / 2]))
		return v[n / 2];
	return 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_parse_count(const char *opt, const char *arg, long lo, long hi, long *out,
                      char *err, size_t errlen)
{
	if (!arg)
		return fs_errf(err, errlen, "%s: missing value", opt);
	if (fs_parse_long(arg, lo, hi, out) != 0)
		return fs_errf(err, errlen, "%s: '%s' is not an integer in %ld..%ld", opt, arg, lo, hi);
	return 0;
}

double bench_process_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
