/* test_guardstat.c - the pooled noise model and the paired verdict against synthetic
 * sessions of known noise (GSL's RNG, fixed seeds; no timing): exact values by hand,
 * coverage of the interval over many seeds, the false-SAFE rate at the allowed ratio,
 * the power against real regressions, the rounds that decide, and the refusals. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "../check.h"
#include "result/guardstat.h"

#define MAXN 64

/* One synthetic final phase at one size: `configs` finalists measured `reps` times each
 * (their latencies feed the pool), and `rounds` interleaved rounds of the baseline (true
 * latency 100 us) and a candidate of true ratio `ratio`; every process draws its own
 * log-normal offset of sd `sd`. */
static int session(gsl_rng *r, double sd, double ratio, size_t rounds, int configs,
                   size_t reps, double allowed, struct guardstat_verdict *v)
{
	struct guardstat_pool p;
	double base[MAXN], cand[MAXN], other[MAXN];
	char err[256];

	guardstat_pool_init(&p);
	for (size_t i = 0; i < rounds; i++) {
		base[i] = 100.0 * exp(gsl_ran_gaussian(r, sd));
		cand[i] = 100.0 * ratio * exp(gsl_ran_gaussian(r, sd));
	}
	if (guardstat_pool_add(&p, base, rounds, err, sizeof err) < 0 ||
	    guardstat_pool_add(&p, cand, rounds, err, sizeof err) < 0)
		return -1;
	for (int c = 0; c < configs; c++) {
		for (size_t i = 0; i < reps; i++)
			other[i] = 100.0 * (1 + c) * exp(gsl_ran_gaussian(r, sd));
		if (guardstat_pool_add(&p, other, reps, err, sizeof err) < 0)
			return -1;
	}
	return guardstat_compare(&p, base, cand, rounds, allowed, 0.95, v, err, sizeof err);
}

static void test_exact(void)
{
	struct guardstat_pool p;
	struct guardstat_verdict v;
	double a[] = {100, 100 * exp(0.02)}, b[] = {10, 10, 10}, base[] = {100, 100},
	       cand[] = {104, 104};
	char err[256];
	double sd, half;

	guardstat_pool_init(&p);
	CHECK(isnan(guardstat_pool_sd(&p)));
	CHECK_INT(guardstat_pool_add(&p, a, 2, err, sizeof err), 0);
	CHECK_INT(guardstat_pool_add(&p, b, 3, err, sizeof err), 0);
	CHECK_INT(guardstat_pool_add(&p, b, 1, err, sizeof err), 0);   /* one repeat: nothing */
	CHECK_INT(p.dof, 3);
	CHECK_INT(p.configs, 2);
	/* log deviations of a: -+0.01, squares 0.0001 + 0.0001; b: 0 */
	sd = sqrt(0.0002 / 3);
	CHECK_NEAR(guardstat_pool_sd(&p), sd, 1e-12);
	CHECK_INT(guardstat_compare(&p, base, cand, 2, 1.02, 0.95, &v, err, sizeof err), 0);
	half = gsl_cdf_tdist_Pinv(0.975, 3) * sqrt(2 * sd * sd / 2);
	CHECK_NEAR(v.ratio, 1.04, 1e-12);
	CHECK_NEAR(v.lo, 1.04 * exp(-half), 1e-12);
	CHECK_NEAR(v.hi, 1.04 * exp(half), 1e-12);
	CHECK_INT(v.call, GUARDSTAT_UNDECIDED);
	CHECK_INT(v.dof, 3);
	CHECK_INT(v.rounds, 2);
	/* more_rounds: the first m with t(3 + 2m) sqrt(2 sd^2 / (2 + m)) < log(1.04 / 1.02) */
	{
		double gap = log(1.04 / 1.02);
		int m = v.more_rounds;

		CHECK(m > 0);
		CHECK(gsl_cdf_tdist_Pinv(0.975, 3 + 2 * m) * sqrt(2 * sd * sd / (2 + m)) < gap);
		CHECK(gsl_cdf_tdist_Pinv(0.975, 3 + 2 * (m - 1)) * sqrt(2 * sd * sd / (1 + m)) >= gap);
	}
	/* identical repeats: no spread, the ratio decides alone */
	guardstat_pool_init(&p);
	CHECK_INT(guardstat_pool_add(&p, b, 3, err, sizeof err), 0);
	CHECK_INT(guardstat_compare(&p, base, cand, 2, 1.02, 0.95, &v, err, sizeof err), 0);
	CHECK_INT(v.call, GUARDSTAT_UNSAFE);
	CHECK_INT(v.more_rounds, 0);
	CHECK_INT(guardstat_compare(&p, base, cand, 2, 1.05, 0.95, &v, err, sizeof err), 0);
	CHECK_INT(v.call, GUARDSTAT_SAFE);
	CHECK_STR(guardstat_call_name(GUARDSTAT_SAFE), "safe");
	CHECK_STR(guardstat_call_name(GUARDSTAT_UNSAFE), "unsafe");
	CHECK_STR(guardstat_call_name(GUARDSTAT_UNDECIDED), "undecided");
}

static void test_refusals(void)
{
	struct guardstat_pool p, empty;
	struct guardstat_verdict v;
	double ok[] = {1, 2}, bad[] = {1, -2}, inf[] = {INFINITY, 1};
	char err[256];

	guardstat_pool_init(&p);
	guardstat_pool_init(&empty);
	CHECK_INT(guardstat_pool_add(&p, bad, 2, err, sizeof err), -1);
	CHECK_CONTAINS(err, "repeat[1]: latency -2 us");
	CHECK_INT(p.dof, 0);   /* unchanged */
	CHECK_INT(guardstat_pool_add(&p, ok, 2, err, sizeof err), 0);
	CHECK_INT(guardstat_compare(&p, ok, ok, 0, 1.02, 0.95, &v, err, sizeof err), -1);
	CHECK_CONTAINS(err, "rounds: none");
	CHECK_INT(guardstat_compare(&p, inf, ok, 2, 1.02, 0.95, &v, err, sizeof err), -1);
	CHECK_CONTAINS(err, "base[0]: latency inf us");
	CHECK_INT(guardstat_compare(&p, ok, bad, 2, 1.02, 0.95, &v, err, sizeof err), -1);
	CHECK_CONTAINS(err, "cand[1]");
	CHECK_INT(guardstat_compare(&p, ok, ok, 2, 0, 0.95, &v, err, sizeof err), -1);
	CHECK_CONTAINS(err, "allowed ratio 0");
	CHECK_INT(guardstat_compare(&p, ok, ok, 2, 1.02, 1.0, &v, err, sizeof err), -1);
	CHECK_CONTAINS(err, "confidence level 1");
	CHECK_INT(guardstat_compare(&empty, ok, ok, 2, 1.02, 0.95, &v, err, sizeof err), -1);
	CHECK_CONTAINS(err, "no configuration was measured twice");
}

/* Over many seeds: the 95% interval covers the true ratio about 95% of the time with
 * 2-round finalists pooled over 10 others, and its width varies far less than a 2-round
 * finalist's own one-dof interval would (that is the point of pooling). */
static void test_coverage(void)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	const int trials = 4000;
	int covered = 0, widths_over = 0;
	struct guardstat_verdict v;

	gsl_rng_set(r, 30);
	for (int t = 0; t < trials; t++) {
		CHECK_INT(session(r, 0.04, 1.03, 2, 10, 2, 1.02, &v), 0);
		covered += v.lo <= 1.03 && 1.03 <= v.hi;
		widths_over += log(v.hi / v.lo) > 2 * 0.5;   /* a factor e wide: one-dof territory */
	}
	/* binomial sd at 4000 trials: 0.0034; +- 0.015 is over 4 sd */
	CHECK_NEAR((double)covered / trials, 0.95, 0.015);
	CHECK_INT(widths_over, 0);
	/* the same with 5 rounds and 3 others */
	covered = 0;
	for (int t = 0; t < trials; t++) {
		CHECK_INT(session(r, 0.05, 0.98, 5, 3, 3, 1.02, &v), 0);
		covered += v.lo <= 0.98 && 0.98 <= v.hi;
	}
	CHECK_NEAR((double)covered / trials, 0.95, 0.015);
	gsl_rng_free(r);
}

/* At a true ratio of exactly the allowed one, SAFE at most (1 - 0.95) / 2 of the time:
 * a guard whose upper bound exceeds the allowed ratio is never called safe. Real
 * regressions and real passes are decided with enough rounds. */
static void test_calls(void)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	const int trials = 4000;
	int safe = 0, unsafe = 0, undecided_more = 0;
	struct guardstat_verdict v;

	gsl_rng_set(r, 31);
	for (int t = 0; t < trials; t++) {
		CHECK_INT(session(r, 0.04, 1.02, 3, 8, 2, 1.02, &v), 0);
		safe += v.call == GUARDSTAT_SAFE;
		unsafe += v.call == GUARDSTAT_UNSAFE;
		undecided_more += v.call == GUARDSTAT_UNDECIDED && v.more_rounds != 0;
		CHECK(v.call != GUARDSTAT_SAFE || v.hi <= 1.02);
	}
	CHECK((double)safe / trials <= 0.025 + 0.008);
	CHECK((double)unsafe / trials <= 0.025 + 0.008);
	CHECK_INT(undecided_more, trials - safe - unsafe);
	/* a 1.093x prefill regression, 4% noise, 12 rounds: shown unsafe nearly always
	 * (expected power about 98%) */
	unsafe = 0;
	for (int t = 0; t < 1000; t++) {
		CHECK_INT(session(r, 0.04, 1.093, 12, 8, 2, 1.02, &v), 0);
		unsafe += v.call == GUARDSTAT_UNSAFE;
		CHECK(v.call != GUARDSTAT_SAFE);
	}
	CHECK(unsafe >= 950);
	/* a true 0.994 (no effect) at 3% noise against a 2% allowance needs rounds: 24 show
	 * it safe in most sessions (expected about 84%), unsafe only in the far tail */
	safe = unsafe = 0;
	for (int t = 0; t < 1000; t++) {
		CHECK_INT(session(r, 0.03, 0.994, 24, 8, 2, 1.02, &v), 0);
		safe += v.call == GUARDSTAT_SAFE;
		unsafe += v.call == GUARDSTAT_UNSAFE;
	}
	CHECK(safe >= 750);
	CHECK(unsafe <= 10);
	gsl_rng_free(r);
}

int main(void)
{
	gsl_set_error_handler_off();
	test_exact();
	test_refusals();
	test_coverage();
	test_calls();
	return check_status();
}
