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
	free(o->cases);
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

bool probe_watchdog_keeps(const struct probe_outcome *o, enum probe_step step, double silent_s,
                          char *warning, size_t len)
{
	if (!o || !o->measured || step != PROBE_STEP_TEARDOWN)
		return false;
	snprintf(warning, len, "teardown hung for %.0f s (communicator finalize, destroy or "
	         "abort); every result was checked and timed before it; the watchdog ended the "
	         "process", silent_s);
	return true;
}

size_t probe_slice_stride(size_t bytes)
{
	return (bytes + 511) / 512 * 512;
}

size_t probe_case_count(const struct probe_config *cfg)
{
	return cfg->w.nsizes + cfg->sweep.nchoices;
}

size_t probe_case_size(const struct probe_config *cfg, size_t c)
{
	if (c < cfg->w.nsizes)
		return c;
	c -= cfg->w.nsizes;
	return c < cfg->sweep.nchoices ? cfg->sweep.choices[c].size : 0;
}

const struct sweep_choice *probe_case_choice(const struct probe_config *cfg, size_t c)
{
	if (c < cfg->w.nsizes || c - cfg->w.nsizes >= cfg->sweep.nchoices)
		return NULL;
	return &cfg->sweep.choices[c - cfg->w.nsizes];
}

/* The bytes of size i's slices, all its ops. */
static size_t size_span(const struct proto_workload *w, size_t i)
{
	return probe_slice_stride(w->bytes[i]) * (size_t)proto_workload_ops(w, i);
}

size_t probe_buffer_size_index(const struct proto_workload *w)
{
	size_t best = 0;

	for (size_t i = 1; i < w->nsizes; i++)
		if (size_span(w, i) > size_span(w, best))
			best = i;
	return best;
}

size_t probe_buffer_bytes(const struct proto_workload *w)
{
	if (w->nsizes == 0)
		return 0;
	return size_span(w, probe_buffer_size_index(w)) * (w->out_of_place ? 2 : 1);
}

/* Per timed replay the slowest of the ranks' times of case c, per op, summarised. */
static void merge_case(const struct probe_config *cfg, const struct probe_outcome *ranks,
                       int nranks, size_t c, double *samples, struct proto_stats *us)
{
	int iters = cfg->w.iters, ops = proto_workload_ops(&cfg->w, probe_case_size(cfg, c));

	for (int i = 0; i < iters; i++) {
		double slowest = 0;

		for (int k = 0; k < nranks; k++) {
			double v = ranks[k].ms[c * (size_t)iters + (size_t)i];

			if (v > slowest)
				slowest = v;
		}
		samples[i] = slowest * 1000.0 / ops;
	}
	proto_stats_compute(samples, (size_t)iters, us);
}

/* A sweep entry for choice case c with the choice's fields; the verdict is the caller's. */
static void entry_start(const struct probe_config *cfg, size_t c, struct proto_sweep_entry *e)
{
	const struct sweep_choice *ch = probe_case_choice(cfg, c);

	memset(e, 0, sizeof *e);
	e->index = c - cfg->w.nsizes;
	e->bytes = ch->bytes;
	e->algo = ch->algo;
	e->proto = ch->proto;
	e->ctas = ch->ctas;
}

/* The first rank (in rank order) whose own check failed case c, or -1. */
static int first_failed(const struct probe_outcome *ranks, int nranks, size_t c)
{
	for (int k = 0; k < nranks; k++)
		if (ranks[k].cases && (size_t)ranks[k].ncases > c &&
		    ranks[k].cases[c].status == PROBE_CASE_FAILED)
			return k;
	return -1;
}

/* Whether any rank has a final verdict against case c. */
static bool any_against(const struct probe_outcome *ranks, int nranks, size_t c)
{
	for (int k = 0; k < nranks; k++)
		if (ranks[k].cases && (size_t)ranks[k].ncases > c &&
		    (ranks[k].cases[c].status == PROBE_CASE_FAILED ||
		     ranks[k].cases[c].status == PROBE_CASE_DROPPED))
			return true;
	return false;
}

/* Fill e's failure from the ranks' verdicts on case c (any_against is true). */
static void entry_failure(const struct probe_outcome *ranks, int nranks, size_t c,
                          struct proto_sweep_entry *e)
{
	int k = first_failed(ranks, nranks, c);

	e->ok = false;
	if (k >= 0) {
		const struct probe_case_result *cr = &ranks[k].cases[c];

		e->stage = (enum proto_stage)cr->stage;
		if (nranks > 1 && strncmp(cr->error, "not available", 13) != 0)
			snprintf(e->error, sizeof e->error, "rank %d: %.*s", k,
			         (int)sizeof e->error - 18, cr->error);
		else
			snprintf(e->error, sizeof e->error, "%s", cr->error);
	} else {
		e->stage = PROTO_STAGE_VERIFY;
		snprintf(e->error, sizeof e->error, "dropped: another rank found it wrong or not "
		         "available, and its report was lost");
	}
}

/* Rank 0's decision on case c, when it has one. */
static struct proto_decision decision_of(const struct probe_outcome *ranks, int nranks,
                                         size_t c)
{
	struct proto_decision none = {0};

	if (nranks < 1 || !ranks[0].cases || (size_t)ranks[0].ncases <= c)
		return none;
	return ranks[0].cases[c].nccl;
}

/* Whether a failure report lists choice case c: a rank judged it, and it is not the one
 * in flight (which is named as such). */
static bool listed_final(const struct probe_config *cfg, const struct probe_outcome *ranks,
                         int nranks, const struct proto_report *r, size_t c)
{
	return any_against(ranks, nranks, c) &&
	       !(r->has_in_flight && c - cfg->w.nsizes == r->sweep_in_flight);
}

void probe_report_failure(const struct probe_config *cfg, const struct probe_outcome *failure,
                          const struct probe_outcome *ranks, int nranks, struct proto_report *r)
{
	size_t ncases = probe_case_count(cfg), n = 0;

	memset(r, 0, sizeof *r);
	proto_report_fail(r, failure->stage, "%s", failure->error);
	if (cfg->sweep.nchoices == 0)
		return;
	if (failure->in_flight_known && failure->in_flight_case >= (int)cfg->w.nsizes &&
	    (size_t)failure->in_flight_case < ncases) {
		r->has_in_flight = true;
		r->sweep_in_flight = (size_t)failure->in_flight_case - cfg->w.nsizes;
	}
	for (size_t c = cfg->w.nsizes; c < ncases; c++)
		n += listed_final(cfg, ranks, nranks, r, c);
	if (n == 0)
		return;
	r->sweep = calloc(n, sizeof *r->sweep);
	if (!r->sweep)
		return;
	for (size_t c = cfg->w.nsizes; c < ncases && r->nsweep < n; c++) {
		struct proto_sweep_entry *e = &r->sweep[r->nsweep];

		if (!listed_final(cfg, ranks, nranks, r, c))
			continue;
		entry_start(cfg, c, e);
		entry_failure(ranks, nranks, c, e);
		e->nccl = decision_of(ranks, nranks, c);
		r->nsweep++;
	}
}

/* --compute-us: the kernel alone, per sample the slowest rank's, into r->compute, and
 * each result's step (a whole replay: us x ops) and all-reduce share (us less the
 * kernel alone, at least 0). Returns 0, or -1 with r a failure when the ranks did not
 * all time it alike. */
static int merge_compute(const struct probe_config *cfg, const struct probe_outcome *ranks,
                         int nranks, struct proto_report *r)
{
	double samples[PROBE_COMPUTE_SAMPLES];
	int n = ranks[0].compute.n;

	if (cfg->w.compute_us <= 0)
		return 0;
	for (int k = 0; k < nranks; k++) {
		if (n < 1 || n > PROBE_COMPUTE_SAMPLES || ranks[k].compute.n != n ||
		    ranks[k].compute.ctas < 1) {
			proto_report_clear(r);
			proto_report_fail(r, PROTO_STAGE_REPLAY, "rank %d timed the compute kernel alone "
			                  "%d times on %d CTAs, rank 0 %d times", k, ranks[k].compute.n,
			                  ranks[k].compute.ctas, n);
			return -1;
		}
	}
	for (int i = 0; i < n; i++) {
		samples[i] = ranks[0].compute.us[i];
		for (int k = 1; k < nranks; k++)
			if (ranks[k].compute.us[i] > samples[i])
				samples[i] = ranks[k].compute.us[i];
	}
	r->compute.known = true;
	r->compute.kernel_us = cfg->w.compute_us;
	r->compute.ctas = ranks[0].compute.ctas;
	proto_stats_compute(samples, (size_t)n, &r->compute.us);
	for (size_t s = 0; s < r->nresults; s++) {
		struct proto_size_result *res = &r->results[s];
		double share = res->us.median - r->compute.us.median;

		res->has_step = true;
		res->step_us = res->us.median * res->ops;
		res->allreduce_us = share > 0 ? share : 0;
	}
	return 0;
}

int probe_merge(const struct probe_config *cfg, const struct probe_outcome *ranks, int nranks,
                struct proto_report *r, double phase_s[PROBE_STEP_COUNT])
{
	size_t ncases = probe_case_count(cfg);
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
			probe_report_failure(cfg, &ranks[k], ranks, nranks, r);
			return 0;
		}
		if (!ranks[k].ms || !ranks[k].cases || ranks[k].ncases != (int)ncases ||
		    ranks[k].iters != cfg->w.iters) {
			proto_report_fail(r, PROTO_STAGE_REPLAY,
			                  "rank %d returned %d cases x %d replays, expected %zu x %d",
			                  k, ranks[k].ncases, ranks[k].iters, ncases, cfg->w.iters);
			return 0;
		}
	}
	if (nranks < 1) {
		proto_report_fail(r, PROTO_STAGE_INIT, "no rank reported a result");
		return 0;
	}
	/* every rank must have kept exactly the graphs the others kept: the replays were
	 * collectives, so anything else is a broken vote, not a measurement */
	for (size_t c = 0; c < ncases; c++) {
		bool kept0 = ranks[0].cases[c].status == PROBE_CASE_KEPT;

		for (int k = 0; k < nranks; k++) {
			bool kept = ranks[k].cases[c].status == PROBE_CASE_KEPT;

			if (kept != kept0 || ranks[k].cases[c].status == PROBE_CASE_UNDECIDED ||
			    (c < cfg->w.nsizes && !kept)) {
				proto_report_fail(r, PROTO_STAGE_REPLAY, "rank %d: case %zu ended %s, rank 0's "
				                  "%s: the ranks disagree", k, c, kept ? "kept" : "not kept",
				                  kept0 ? "kept" : "not kept");
				return 0;
			}
		}
	}
	samples = malloc((size_t)cfg->w.iters * sizeof *samples);
	r->sweep = cfg->sweep.nchoices ? calloc(cfg->sweep.nchoices, sizeof *r->sweep) : NULL;
	if (!samples || (cfg->sweep.nchoices && !r->sweep)) {
		proto_report_clear(r);
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

		res->bytes = cfg->w.bytes[s];
		res->ops = proto_workload_ops(&cfg->w, s);
		res->samples = cfg->w.iters;
		res->correct = true;   /* a wrong sum never gets here: it fails the rank */
		merge_case(cfg, ranks, nranks, s, samples, &res->us);
		res->nccl = decision_of(ranks, nranks, s);
	}
	for (size_t c = cfg->w.nsizes; c < ncases; c++) {
		struct proto_sweep_entry *e = &r->sweep[r->nsweep++];

		entry_start(cfg, c, e);
		e->nccl = decision_of(ranks, nranks, c);
		if (ranks[0].cases[c].status != PROBE_CASE_KEPT) {
			entry_failure(ranks, nranks, c, e);
			continue;
		}
		e->ok = true;
		e->samples = cfg->w.iters;
		merge_case(cfg, ranks, nranks, c, samples, &e->us);
	}
	if (merge_compute(cfg, ranks, nranks, r) == 0)   /* else r is its failure */
		r->window_symmetric = cfg->w.window_symmetric;
	for (int k = 0; r->ok && k < nranks; k++)   /* a hung teardown, aborted: said, kept */
		if (ranks[k].warning[0])
			proto_report_warn(r, "rank %d: %.200s", k, ranks[k].warning);
	rc = 0;
out:
	free(samples);
	return rc;
}
