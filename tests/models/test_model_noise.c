/* test_model_noise.c - from exact latencies to a probe report (models/noise.c): noise 0
 * is exact, a seeded run is reproduced exactly, the statistics are consistent, the
 * noise seed separates configurations, and a plain run draws exactly the stream it drew
 * before sweeps existed (transient failure, one offset, then per size every sample's
 * jitter and outlier draws), re-derived here independently. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "model.h"
#include "modeldef.h"

/* The plain run's draws, spelled out: what model_report must reproduce bit for bit. */
static void expected_stats(const struct model *m, const struct model_eval_result *res,
                           size_t n, double scale, unsigned long seed, struct proto_stats *out)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double *x = malloc(n * sizeof *x), run;

	CHECK(rng && x);
	if (!rng || !x)
		goto out;
	gsl_rng_set(rng, seed);
	if (m->transient_failure_probability > 0)
		(void)gsl_rng_uniform(rng);
	run = exp(gsl_ran_gaussian(rng, m->run_sigma * scale));
	for (size_t i = 0; i < res->nsizes; i++) {
		for (size_t k = 0; k < n; k++) {
			x[k] = res->us[i];
			x[k] *= run * exp(gsl_ran_gaussian(rng, m->sigma * scale));
			if (gsl_rng_uniform(rng) < fmin(1.0, m->outlier_probability * scale))
				x[k] *= gsl_ran_flat(rng, m->outlier_lo, m->outlier_hi);
		}
		proto_stats_compute(x, n, &out[i]);
	}
out:
	free(x);
	gsl_rng_free(rng);
}

static void report(const struct model *m, const struct model_eval_result *res,
                   const struct proto_workload *w, double noise, unsigned long seed,
                   struct proto_report *out)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	char err[256];

	CHECK(rng != NULL);
	if (rng)
		gsl_rng_set(rng, seed);
	CHECK_INT(model_report(m, res, w, noise, rng, out, err, sizeof err), 0);
	gsl_rng_free(rng);
}

int main(void)
{
	char err[512];
	struct model *m = model_load_builtin("pcie-gen5-8gpu", err, sizeof err);
	struct proto_workload w;
	struct model_env env, env2;
	struct model_eval_result res;
	struct proto_report a, b, c;
	char *envp2[] = { "NCCL_MAX_NCHANNELS=4", NULL };

	gsl_set_error_handler_off();
	CHECK(m != NULL);
	if (!m)
		return check_status();
	proto_workload_defaults(&w);
	w.nsizes = 2;
	w.bytes[1] = 4096;
	w.iters = 500;
	model_env_read(model_getenv_envp, NULL, &env);
	model_eval(m, &env, &w, &res);
	CHECK(res.ok);

	/* noise 0: every statistic is the exact value, no rng needed */
	CHECK_INT(model_report(m, &res, &w, 0.0, NULL, &a, err, sizeof err), 0);
	CHECK(a.ok);
	CHECK_STR(a.source, "model");
	CHECK_STR(a.model, "pcie-gen5-8gpu");
	CHECK_STR(a.nccl_version, "2.28.9");
	CHECK_INT(a.nranks, 8);
	CHECK_INT(a.nresults, 2);
	for (size_t i = 0; i < 2; i++) {
		CHECK_INT(a.results[i].bytes, w.bytes[i]);
		CHECK_INT(a.results[i].samples, 500);
		CHECK_INT(a.results[i].ops, 122);
		CHECK(a.results[i].correct);
		CHECK(a.results[i].us.median == res.us[i] && a.results[i].us.min == res.us[i] &&
		      a.results[i].us.max == res.us[i] && a.results[i].us.p10 == res.us[i] &&
		      a.results[i].us.p90 == res.us[i]);
	}

	/* noise: same seed, same report; another seed, another one; statistics consistent */
	report(m, &res, &w, 1.0, 42, &a);
	report(m, &res, &w, 1.0, 42, &b);
	report(m, &res, &w, 1.0, 43, &c);
	CHECK(a.ok && b.ok && c.ok);
	CHECK(memcmp(&a.results, &b.results, sizeof a.results) == 0);
	CHECK(a.results[0].us.median != c.results[0].us.median);
	for (size_t i = 0; i < 2; i++) {
		const struct proto_stats *s = &a.results[i].us;

		CHECK(s->min <= s->p10 && s->p10 <= s->median && s->median <= s->p90 &&
		      s->p90 <= s->max);
		CHECK(s->min > 0);
		/* a per-run offset of 3% and per-replay jitter of 4%: the median stays close */
		CHECK_NEAR(s->median / res.us[i], 1.0, 0.15);
		CHECK(s->p90 > s->p10);
	}
	/* the plain run's stream is the one it always was */
	{
		struct proto_stats want[2];

		CHECK(m->transient_failure_probability == 0);
		expected_stats(m, &res, 500, 1.0, 42, want);
		for (size_t i = 0; i < 2; i++)
			CHECK(memcmp(&a.results[i].us, &want[i], sizeof want[i]) == 0);
	}
	/* more noise, wider spread */
	report(m, &res, &w, 3.0, 42, &c);
	CHECK(c.results[0].us.p90 / c.results[0].us.p10 > a.results[0].us.p90 / a.results[0].us.p10);

	/* samples are capped */
	w.iters = 1000000;
	CHECK_INT(model_report(m, &res, &w, 0.0, NULL, &a, err, sizeof err), 0);
	CHECK_INT(a.results[0].samples, 100000);
	w.iters = 500;

	/* a failed evaluation becomes a failure report */
	{
		struct model_eval_result bad = res;

		bad.ok = false;
		bad.stage = PROTO_STAGE_CAPTURE;
		snprintf(bad.error, sizeof bad.error, "boom");
		CHECK_INT(model_report(m, &bad, &w, 1.0, NULL, &a, err, sizeof err), 0);
		CHECK(!a.ok);
		CHECK_INT(a.stage, PROTO_STAGE_CAPTURE);
		CHECK_STR(a.error, "boom");
	}

	/* the noise seed depends on the seed, the configuration and the workload */
	model_env_read(model_getenv_envp, envp2, &env2);
	CHECK(model_noise_seed(m, &env, &w, 1) == model_noise_seed(m, &env, &w, 1));
	CHECK(model_noise_seed(m, &env, &w, 1) != model_noise_seed(m, &env, &w, 2));
	CHECK(model_noise_seed(m, &env, &w, 1) != model_noise_seed(m, &env2, &w, 1));
	{
		unsigned long before = model_noise_seed(m, &env, &w, 1);

		w.bytes[1] = 8192;
		CHECK(model_noise_seed(m, &env, &w, 1) != before);
	}
	model_destroy(m);
	return check_status();
}
