/* noise.c - turn the evaluator's exact latencies into what a probe would report: one
 * timing per graph replay, each the exact latency times a per-run offset (a fresh process
 * lands on different clocks and placements) times a per-replay log-normal jitter, with
 * rare outliers (a host interrupt, a clock dip); plus, when the model says so, a rare
 * transient failure. All randomness comes from the caller's gsl_rng. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "fsutil.h"
#include "model.h"
#include "modeldef.h"

#define MAX_SAMPLES 100000

static uint64_t mix(uint64_t h, uint64_t v)
{
	/* splitmix64 finaliser over a running combination */
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

static uint64_t mix_string(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = mix(h, (unsigned char)*s);
	return mix(h, 0xff);
}

unsigned long model_noise_seed(const struct model *m, const struct model_env *env,
                               const struct proto_workload *w, unsigned long seed)
{
	uint64_t h = mix(0x6e63636c74756e65ull, seed);

	h = mix_string(h, m->name);
	for (size_t i = 0; i < MODEL_ENV_NVARS; i++) {
		h = mix(h, env->is_set[i]);
		h = mix_string(h, env->raw[i]);
	}
	for (size_t i = 0; i < w->nsizes; i++)
		h = mix(h, w->bytes[i]);
	h = mix(h, (uint64_t)w->ops);
	for (size_t i = 0; i < w->nops; i++)   /* a per-size --ops list (none: as before lists) */
		h = mix(h, (uint64_t)w->ops_list[i] + 0x10000ull * (i + 1));
	h = mix(h, (uint64_t)w->dtype);
	h = mix(h, (uint64_t)w->iters);
	h = mix(h, (uint64_t)w->warmup);
	h = mix(h, w->out_of_place);
	return (unsigned long)h;
}

unsigned long model_noise_seed_mix(unsigned long seed, const char *s)
{
	return (unsigned long)mix_string(mix((uint64_t)seed, 0x706c7567696e0000ull), s ? s : "");
}

size_t model_noise_samples(const struct proto_workload *w)
{
	size_t n = w->iters < 1 ? 1 : (size_t)w->iters;

	return n > MAX_SAMPLES ? MAX_SAMPLES : n;
}

int model_noise_begin(struct model_noise *n, const struct model *m, double noise_scale,
                      gsl_rng *rng)
{
	n->m = m;
	n->scale = noise_scale > 0 && rng ? noise_scale : 0;
	n->rng = n->scale > 0 ? rng : NULL;
	n->run = 1.0;
	if (!n->rng)
		return 0;
	if (m->transient_failure_probability > 0 &&
	    gsl_rng_uniform(rng) < fmin(1.0, m->transient_failure_probability * n->scale))
		return 1;
	n->run = exp(gsl_ran_gaussian(rng, m->run_sigma * n->scale));
	return 0;
}

double model_noise_sample(struct model_noise *n, double us)
{
	double x = us;

	if (n->rng) {
		x *= n->run * exp(gsl_ran_gaussian(n->rng, n->m->sigma * n->scale));
		if (gsl_rng_uniform(n->rng) < fmin(1.0, n->m->outlier_probability * n->scale))
			x *= gsl_ran_flat(n->rng, n->m->outlier_lo, n->m->outlier_hi);
	}
	/* what the report's reader accepts: no collective completes faster (a large --noise
	 * draws factors far below 1) */
	return fmax(x, PROTO_US_FLOOR);
}

int model_report(const struct model *m, const struct model_eval_result *res,
                 const struct proto_workload *w, double noise_scale, gsl_rng *rng,
                 struct proto_report *out, char *err, size_t errlen)
{
	size_t n = model_noise_samples(w);
	struct model_noise nz;
	double *samples = NULL;

	memset(out, 0, sizeof *out);
	if (!res->ok) {
		proto_report_fail(out, res->stage, "%s", res->error);
		return 0;
	}
	if (model_noise_begin(&nz, m, noise_scale, rng) != 0) {
		proto_report_fail(out, PROTO_STAGE_INIT, "ncclCommInitRank failed: remote process "
		                  "exited or there was a network error (simulated transient failure)");
		return 0;
	}
	samples = malloc(n * sizeof *samples);
	if (!samples) {
		proto_report_fail(out, PROTO_STAGE_INIT, "model probe: out of memory");
		return fs_errf(err, errlen, "out of memory for %zu samples", n);
	}

	out->ok = true;
	out->nranks = m->ngpus;
	snprintf(out->nccl_version, sizeof out->nccl_version, "%s", m->nccl_version);
	snprintf(out->source, sizeof out->source, "model");
	snprintf(out->model, sizeof out->model, "%s", m->name);
	for (size_t i = 0; i < res->nsizes; i++) {
		struct proto_size_result *s = &out->results[i];

		for (size_t k = 0; k < n; k++)
			samples[k] = model_noise_sample(&nz, res->us[i]);
		s->bytes = w->bytes[i];
		s->ops = proto_workload_ops(w, i);
		s->samples = (int)n;
		s->correct = true;
		s->nccl = model_choice_decision(&res->choice[i]);
		proto_stats_compute(samples, n, &s->us);
	}
	out->nresults = res->nsizes;
	free(samples);
	return 0;
}
