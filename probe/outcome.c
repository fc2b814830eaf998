/* outcome.c - per-rank outcomes and how they become one protocol report: step names and
 * stages, the clock, and the merge that takes the slowest rank per replay. */
#include "probe.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct { const char *name; enum proto_stage stage; } steps[PROBE_STEP_COUNT] = {
	[PROBE_STEP_CUDA_INIT] = {"cuda_init", PROTO_STAGE_INIT},
	[PROBE_STEP_NCCL_INIT] = {"nccl_init", PROTO_STAGE_INIT},
	/* An eager all-reduce fails for the same reasons its captured twin would (no
	 * algorithm/protocol for the size), and it stands in for NCCL's lazy connection
	 * setup, so its failures count as communicator setup. */
	[PROBE_STEP_EAGER] = {"eager", PROTO_STAGE_INIT},
	[PROBE_STEP_CAPTURE] = {"capture", PROTO_STAGE_CAPTURE},
	[PROBE_STEP_INSTANTIATE] = {"instantiate", PROTO_STAGE_CAPTURE},
	[PROBE_STEP_WARMUP] = {"warmup", PROTO_STAGE_REPLAY},
	[PROBE_STEP_TIMING] = {"timing", PROTO_STAGE_REPLAY},
	[PROBE_STEP_VERIFY] = {"verify", PROTO_STAGE_VERIFY},
	[PROBE_STEP_TEARDOWN] = {"teardown", PROTO_STAGE_REPLAY},
};

const char *probe_step_name(enum probe_step s)
{
	if ((unsigned)s < PROBE_STEP_COUNT)
		return steps[s].name;
	return "?";
}

enum proto_stage probe_step_stage(enum probe_step s)
{
	if ((unsigned)s < PROBE_STEP_COUNT)
		return steps[s].stage;
	return PROTO_STAGE_INIT;
}

double probe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void probe_outcome_clear(struct probe_outcome *o)
{
	if (!o)
		return;
	free(o->ms);
	memset(o, 0, sizeof *o);
	o->stage = PROTO_STAGE_INIT;
}

void probe_outcome_fail(struct probe_outcome *o, enum proto_stage stage, const char *fmt, ...)
{
	va_list ap;

	o->ok = false;
	o->stage = stage;
	va_start(ap, fmt);
	vsnprintf(o->error, sizeof o->error, fmt, ap);
	va_end(ap);
}

void probe_nccl_version_string(int code, char *buf, size_t len)
{
	/* NCCL_VERSION(X,Y,Z) is X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before. */
	if (code >= 20900)
		snprintf(buf, len, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
	else if (code > 0)
		snprintf(buf, len, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
	else
		snprintf(buf, len, "unknown");
}

enum proto_stage probe_watchdog_failure(const struct probe_config *cfg,
                                        const struct probe_outcome *o, int rank,
                                        enum probe_step step, double silent_s, char *msg,
                                        size_t len)
{
	char who[32] = "";

	if (rank >= 0)
		snprintf(who, sizeof who, "rank %d: ", rank);
	if (o && !o->ok && o->error[0]) {
		snprintf(msg, len, "%s%.900s (then step %s hung for %.0f s; the watchdog ended the "
		         "process)", who, o->error, probe_step_name(step), silent_s);
		return o->stage;
	}
	snprintf(msg, len, "%swatchdog: step %s made no progress for %.0f s (--step-timeout %g); "
	         "process ended", who, probe_step_name(step), silent_s, cfg->step_timeout_s);
	return probe_step_stage(step);
}

size_t probe_slice_stride(size_t bytes)
{
	return (bytes + 511) / 512 * 512;
}

size_t probe_buffer_bytes(const struct proto_workload *w)
{
	size_t maxb = 0;

	for (size_t i = 0; i < w->nsizes; i++)
		if (w->bytes[i] > maxb)
			maxb = w->bytes[i];
	return probe_slice_stride(maxb) * (size_t)w->ops * (w->out_of_place ? 2 : 1);
}

int probe_merge(const struct probe_config *cfg, const struct probe_outcome *ranks, int nranks,
                struct proto_report *r, double phase_s[PROBE_STEP_COUNT])
{
	double *samples = NULL;
	int rc = -1;

	memset(r, 0, sizeof *r);
	for (int s = 0; s < PROBE_STEP_COUNT; s++) {
		phase_s[s] = 0;
		for (int k = 0; k < nranks; k++)
			if (ranks[k].phase_s[s] > phase_s[s])
				phase_s[s] = ranks[k].phase_s[s];
	}
	for (int k = 0; k < nranks; k++) {
		if (!ranks[k].ok) {
			proto_report_fail(r, ranks[k].stage, "%s", ranks[k].error);
			return 0;
		}
		if (!ranks[k].ms || ranks[k].nsizes != (int)cfg->w.nsizes ||
		    ranks[k].iters != cfg->w.iters) {
			proto_report_fail(r, PROTO_STAGE_REPLAY,
			                  "rank %d returned %d sizes x %d replays, expected %zu x %d",
			                  k, ranks[k].nsizes, ranks[k].iters, cfg->w.nsizes,
			                  cfg->w.iters);
			return 0;
		}
	}
	if (nranks < 1) {
		proto_report_fail(r, PROTO_STAGE_INIT, "no rank reported a result");
		return 0;
	}
	samples = malloc((size_t)cfg->w.iters * sizeof *samples);
	if (!samples) {
		proto_report_fail(r, PROTO_STAGE_INIT, "out of memory merging %d replays",
		                  cfg->w.iters);
		goto out;
	}
	r->ok = true;
	r->nranks = nranks;
	probe_nccl_version_string(ranks[0].nccl_version, r->nccl_version, sizeof r->nccl_version);
	snprintf(r->source, sizeof r->source, "measured");
	r->nresults = cfg->w.nsizes;
	for (size_t s = 0; s < cfg->w.nsizes; s++) {
		struct proto_size_result *res = &r->results[s];

		for (int i = 0; i < cfg->w.iters; i++) {
			double slowest = 0;

			for (int k = 0; k < nranks; k++) {
				double v = ranks[k].ms[s * (size_t)cfg->w.iters + (size_t)i];

				if (v > slowest)
					slowest = v;
			}
			samples[i] = slowest * 1000.0 / cfg->w.ops;
		}
		res->bytes = cfg->w.bytes[s];
		res->ops = cfg->w.ops;
		res->samples = cfg->w.iters;
		res->correct = true;   /* a wrong sum never gets here: it fails the rank */
		proto_stats_compute(samples, (size_t)cfg->w.iters, &res->us);
	}
	rc = 0;
out:
	free(samples);
	return rc;
}
