/* measure.c - communicator -> per case: eager, capture, check -> warm-up -> timed replays
 * -> teardown, for the ranks one process drives (see measure.h, docs/measurement.md).
 * This file holds the flow, set-up and teardown, on top of its siblings: the primitives
 * (measure_step.c), the cases (measure_cases.c: forced sweep choices, eager, votes,
 * capture and preparation, replays) and a server's additions (measure_server.c).
 *
 * A case is one graph: a size of --bytes under the process's own configuration, or, in a
 * sweep, a choice of the sweep file forced through nccltune's tuner plugin. Every case is
 * prepared (and checked) first, all graphs are kept, then all are replayed: in case order
 * for a plain run, in the sweep file's interleaved rounds for a sweep.
 *
 * Nothing here blocks on the GPU: every wait polls the stream or event together with
 * ncclCommGetAsyncError and gives up at the step timeout, aborting the communicators,
 * so a hung configuration becomes a failure report instead of a stuck process. */
#include "measure.h"
#include "measure_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "callcheck.h"
#include "numeric.h"

int measure_device_count(int *count, struct probe_outcome *out)
{
	cudaError_t e = cudaGetDeviceCount(count);

	if (e != cudaSuccess) {
		*count = 0;
		probe_outcome_fail(out, PROTO_STAGE_INIT, "no CUDA device visible: "
		                   "cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e),
		                   cudaGetErrorName(e));
		return -1;
	}
	if (*count < 1) {
		probe_outcome_fail(out, PROTO_STAGE_INIT, "no CUDA device visible: "
		                   "cudaGetDeviceCount returned 0 (CUDA_VISIBLE_DEVICES=%s)",
		                   getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES")
		                                                  : "unset");
		return -1;
	}
	return 0;
}

int measure_unique_id(ncclUniqueId *id, struct probe_outcome *out)
{
	ncclResult_t r = ncclGetUniqueId(id);

	if (r != ncclSuccess) {
		const char *last = ncclGetLastError(NULL);

		probe_outcome_fail(out, PROTO_STAGE_INIT, "ncclGetUniqueId: %s%s%s",
		                   ncclGetErrorString(r), last && *last ? ": " : "",
		                   last ? last : "");
		return -1;
	}
	return 0;
}

/* Streams, buffers, events and per-case graph slots for every local rank. */
static int setup_cuda(struct measure *m)
{
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		r->graph = calloc(m->ncases, sizeof *r->graph);
		r->exec = calloc(m->ncases, sizeof *r->exec);
		if (!r->graph || !r->exec) {
			check_failf(&m->chk, "out of host memory for %zu graphs", m->ncases);
			goto out;
		}
		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaFree(NULL));   /* create the context now, not later */
		CUDACHECK(&m->chk, cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
		if (measure_buffers_alloc(m, r) != 0)
			goto out;
		CUDACHECK(&m->chk, cudaMalloc((void **)&r->barrier, sizeof *r->barrier));
		CUDACHECK(&m->chk, cudaMemset(r->barrier, 0, sizeof *r->barrier));
		CUDACHECK(&m->chk, cudaMalloc((void **)&r->vote, sizeof *r->vote));
		for (; r->nevents < MEASURE_RING; r->nevents++) {
			CUDACHECK(&m->chk, cudaEventCreate(&r->start[r->nevents]));
			if (cudaEventCreate(&r->stop[r->nevents]) != cudaSuccess) {
				cudaEventDestroy(r->start[r->nevents]);
				CUDACHECK(&m->chk, cudaGetLastError());
				check_failf(&m->chk, "cudaEventCreate failed");
				goto out;
			}
		}
	}
	rc = 0;
out:
	return rc;
}

static ncclResult_t init_rank(struct measure *m, struct rank_state *r, void *ctx)
{
	return ncclCommInitRankConfig(&r->comm, m->s->nranks, m->s->id, r->rank, ctx);
}

static int setup_nccl(struct measure *m)
{
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;

	/* Non-blocking: init and every call return at once, so the probe can poll, time out
	 * and abort instead of hanging inside NCCL. */
	config.blocking = 0;
	return measure_group_each(m, true, "ncclCommInitRankConfig", init_rank, &config);
}

static void drop_graphs(struct measure *m)
{
	for (size_t c = 0; c < m->ncases; c++)
		measure_drop_case(m, c);
}

/* After a verified run: deregister the windows and finalize every communicator, waiting
 * at most half the step timeout (the other half is the abort's). Graphs must be gone
 * first: NCCL's finalize waits until no graph that captured the communicator is left
 * (commDestroySync polls localPersistentRefs down to 0 in NCCL 2.30, src/init.cc), so
 * a graph destroyed after it hangs it - as NCCL 2.30.7 with two ranks on one GPU did.
 * Returns 0, or -1 with the reason in `why` (the communicators are then to be
 * aborted, and the measurement stands). */
static int finalize_comms(struct measure *m, char *why, size_t len)
{
	double half = m->s->cfg->step_timeout_s / 2;
	int rc = -1;

	m->chk.deadline = probe_now() + half;
	if (measure_window_release(m) != 0)
		goto out;
	for (int k = 0; k < m->s->nlocal; k++) {
		ncclResult_t res = ncclCommFinalize(m->rs[k].comm);

		if (res != ncclSuccess && res != ncclInProgress) {
			check_nccl_result(&m->chk, m->rs[k].comm, res, "ncclCommFinalize", __FILE__,
			                  __LINE__);
			goto out;
		}
	}
	m->chk.deadline = probe_now() + half;
	if (measure_wait_comms(m) != 0)
		goto out;
	rc = 0;
out:
	if (rc != 0)
		snprintf(why, len, "%s", m->out[0].error);
	return rc;
}

/* Release everything: graphs first, then communicators - finalized and destroyed when
 * all went well, aborted otherwise (abort also stops kernels that wait for a peer that
 * will never come). With --teardown fast a run that went well leaves its communicators
 * alone: the process ends with _exit right after reporting and the driver releases
 * them with the CUDA context. What NCCL's destroy would cost is mostly waiting for its
 * proxy service thread, which sleeps in poll() for up to 500 ms when idle
 * (src/proxy.cc). A verified run stays verified: a finalize that fails or hangs is
 * aborted within the step timeout and leaves a warning in out[0].warning, never a
 * failure. Can't fail. */
static void teardown(struct measure *m, bool ok)
{
	bool keep_comms = ok && m->s->cfg->teardown == PROBE_TEARDOWN_FAST;
	bool destroy = ok && !keep_comms;

	measure_end_captures(m);
	/* Graphs go first, in a failed run too: NCCL's abort, like its destroy, waits in
	 * commDestroySync until no graph that captured the communicator is left (the last
	 * local rank's ncclCommAbort, blocking: NCCL 2.30 src/init.cc commReclaim), so a
	 * graph destroyed after the abort hangs it (the rig: 75 s to the watchdog). Dropping
	 * a graph a replay stuck on a peer still runs does not wait: CUDA frees it when
	 * that replay ends, which the abort's flag brings about. */
	drop_graphs(m);
	if (destroy) {
		struct probe_outcome saved = m->out[0];   /* the ok outcome, before any failure */
		char why[PROTO_ERROR_MAX] = "";

		if (finalize_comms(m, why, sizeof why) != 0) {
			destroy = false;
			snprintf(saved.warning, sizeof saved.warning, "teardown: %.160s; every result "
			         "was checked and timed before it, the communicators were aborted", why);
			m->out[0] = saved;
		}
	}
	for (int k = 0; k < m->s->nlocal && !keep_comms; k++) {
		struct rank_state *r = &m->rs[k];

		if (!r->comm)
			continue;
		if (destroy)
			ncclCommDestroy(r->comm);
		else
			ncclCommAbort(r->comm);
		r->comm = NULL;
	}
	measure_compute_release(m);
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		if (cudaSetDevice(r->device) != cudaSuccess)
			goto forget;
		if (r->stream)
			cudaStreamSynchronize(r->stream);
		for (int e = 0; e < r->nevents; e++) {
			cudaEventDestroy(r->start[e]);
			cudaEventDestroy(r->stop[e]);
		}
		/* windows still registered (fast teardown) keep their memory to the exit */
		if (!(keep_comms && r->nccl_mem))
			measure_buffers_free(r);
		if (r->barrier)
			cudaFree(r->barrier);
		if (r->vote)
			cudaFree(r->vote);
		if (r->stream)
			cudaStreamDestroy(r->stream);
forget:
		free(r->graph);
		free(r->exec);
		memset(r, 0, sizeof *r);
	}
	measure_poll_log(m);   /* the last of NCCL's warnings */
}

/* NCCL_CUMEM_ENABLE as NCCL reads it (an integer, strtoll base 0): set and 0. */
static bool cumem_disabled(void)
{
	const char *v = getenv("NCCL_CUMEM_ENABLE");
	char *end;

	return v && *v && strtoll(v, &end, 0) == 0;
}

/* Host-side arrays of a run: staging, per-rank timings and case verdicts, the kept set. */
static int setup_host(struct measure *m)
{
	size_t nms = m->ncases * (size_t)m->w->iters;
	int rc = -1;

	m->host = malloc(m->buf_bytes);
	m->keep = calloc(m->ncases, sizeof *m->keep);
	m->bad = calloc((size_t)m->s->nlocal, sizeof *m->bad);
	m->votes = calloc((size_t)m->s->nlocal, sizeof *m->votes);
	if (!m->host || !m->keep || !m->bad || !m->votes) {
		check_failf(&m->chk, "out of host memory for %zu bytes of staging", m->buf_bytes);
		goto out;
	}
	for (int k = 0; k < m->s->nlocal; k++) {
		m->out[k].ms = calloc(nms, sizeof *m->out[k].ms);
		m->out[k].cases = calloc(m->ncases, sizeof *m->out[k].cases);
		if (!m->out[k].ms || !m->out[k].cases) {
			check_failf(&m->chk, "out of host memory for %zu timings", nms);
			goto out;
		}
	}
	rc = 0;
out:
	return rc;
}

int measure_run(const struct measure_setup *s, struct probe_outcome *out)
{
	struct measure m;
	int version = 0, rc = -1, in_flight;
	double t;

	memset(&m, 0, sizeof m);
	m.s = s;
	m.cfg = s->cfg;
	m.w = &s->cfg->w;
	m.out = out;
	m.chk.out = &out[0];
	m.buf_bytes = probe_buffer_bytes(m.w) / (m.w->out_of_place ? 2 : 1);
	m.maxv = numeric_max_value(s->nranks);
	m.ncases = probe_case_count(s->cfg);
	m.cur_case = -1;
	m.rank0 = -1;
	m.rs = calloc((size_t)s->nlocal, sizeof *m.rs);
	if (!m.rs) {
		probe_outcome_fail(&out[0], PROTO_STAGE_INIT, "out of memory for %d ranks", s->nlocal);
		return -1;
	}
	for (int k = 0; k < s->nlocal; k++) {
		m.rs[k].rank = s->ranks[k];
		m.rs[k].device = s->devices[k];
		out[k].ncases = (int)m.ncases;
		out[k].iters = m.w->iters;
		if (s->ranks[k] == 0)
			m.rank0 = k;
	}
	measure_step_begin(&m, PROBE_STEP_CUDA_INIT, "CUDA setup of %d GPU(s)", s->nlocal);
	if (m.maxv == 0) {
		check_failf(&m.chk, "%d ranks: too many to keep every sum exact in bf16", s->nranks);
		goto out;
	}
	if (s->cfg->corrupt_rank >= s->nranks) {
		check_failf(&m.chk, "--test-corrupt-rank %d: there are only %d rank(s)",
		            s->cfg->corrupt_rank, s->nranks);
		goto out;
	}
	if (s->cfg->sweep.nchoices > 0 && !s->plugin) {
		check_failf(&m.chk, "--sweep without the plugin's control interface");
		goto out;
	}
	if (s->cfg->w.window_symmetric && cumem_disabled()) {
		measure_fail(&m, PROTO_STAGE_ENV, "--window symmetric needs cuMem (symmetric windows "
		             "are cuMem mappings), and NCCL_CUMEM_ENABLE=%s turns it off",
		             getenv("NCCL_CUMEM_ENABLE"));
		goto out;
	}
	if (setup_host(&m) != 0 || setup_cuda(&m) != 0 || measure_compute_setup(&m) != 0)
		goto out;
	measure_step_end(&m);

	measure_step_begin(&m, PROBE_STEP_NCCL_INIT, "NCCL communicator init (%d ranks)", s->nranks);
	if (ncclGetVersion(&version) == ncclSuccess)
		for (int k = 0; k < s->nlocal; k++)
			out[k].nccl_version = version;
	if (setup_nccl(&m) != 0 || measure_window_register(&m) != 0)
		goto out;
	measure_step_end(&m);

	for (size_t c = 0; c < m.ncases; c++)
		if (measure_prepare_case(&m, c) != 0)
			goto out;
	m.cur_case = -1;
	if (measure_replay_all(&m) != 0)
		goto out;
	m.cur_case = -1;
	if (measure_compute_alone(&m) != 0)
		goto out;
	rc = 0;
out:
	measure_step_end(&m);  /* the failing step's time up to here counts too */
	in_flight = m.cur_case;
	t = probe_now();
	m.cur_case = -1;
	for (int k = 0; rc == 0 && k < s->nlocal; k++)
		out[k].measured = true;   /* a watchdog firing in teardown keeps the results */
	measure_step_begin(&m, PROBE_STEP_TEARDOWN, "teardown");
	m.step_open = false;
	if (s->cfg->stall_teardown && m.rank0 >= 0) {
		fprintf(stderr, "nccltune-probe: rank 0: --test-stall-teardown: stopping as its "
		        "teardown starts\n");
		for (;;)
			sleep(1);
	}
	teardown(&m, rc == 0);
	for (int k = 0; k < s->nlocal; k++) {
		out[k].phase_s[PROBE_STEP_TEARDOWN] = probe_now() - t;
		out[k].ok = rc == 0;
		if (rc != 0 && k > 0) {
			out[k].stage = out[0].stage;
			snprintf(out[k].error, sizeof out[k].error, "%s", out[0].error);
		}
		if (rc != 0) {
			out[k].in_flight_known = in_flight >= 0;
			out[k].in_flight_case = in_flight;
			free(out[k].ms);
			out[k].ms = NULL;
		}
	}
	if (s->plugin && s->plugin->force) {
		s->plugin->force(NULL);
		s->plugin->record(0);
	}
	free(m.host);
	free(m.keep);
	free(m.bad);
	free(m.votes);
	free(m.rs);
	return rc;
}
