/* measure.c - communicator -> per case: eager, capture, check -> warm-up -> timed replays
 * -> teardown, for the ranks one process drives (see measure.h, docs/measurement.md).
 * This file holds the flow, set-up, the primitives and teardown; the cases (forced sweep
 * choices, eager, votes, preparation, replays) are measure_cases.c.
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

#include "callcheck.h"
#include "numeric.h"

static const ncclDataType_t nccl_types[] = {
	[PROTO_DTYPE_BF16] = ncclBfloat16, [PROTO_DTYPE_F16] = ncclFloat16,
	[PROTO_DTYPE_F32] = ncclFloat32,
};

/* Refresh the step deadline and tell the launcher we are alive (and where). */
void measure_kick(struct measure *m)
{
	m->chk.deadline = probe_now() + m->s->cfg->step_timeout_s;
	if (m->s->on_step)
		m->s->on_step(m->s->arg, m->chk.step, m->cur_case);
}

/* New lines of NCCL's log (its warnings go to stderr); cheap when there are none. */
static void poll_log(struct measure *m)
{
	if (m->s->log)
		nccllog_reader_poll(m->s->log);
}

void measure_step_begin(struct measure *m, enum probe_step step, const char *fmt, ...)
{
	va_list ap;

	m->chk.step = step;
	va_start(ap, fmt);
	vsnprintf(m->chk.what, sizeof m->chk.what, fmt, ap);
	va_end(ap);
	m->step_started = probe_now();
	m->step_open = true;
	poll_log(m);
	measure_kick(m);
	if (m->s->cfg->verbose)
		fprintf(stderr, "nccltune-probe: rank %d: %s\n", m->rs[0].rank, m->chk.what);
}

void measure_step_end(struct measure *m)
{
	double dt = probe_now() - m->step_started;

	if (!m->step_open)
		return;
	m->step_open = false;
	for (int k = 0; k < m->s->nlocal; k++)
		m->out[k].phase_s[m->chk.step] += dt;
}

/* A failure of the probe's own at `stage` (not the current step's), unless one is
 * already recorded. */
void measure_fail(struct measure *m, enum proto_stage stage, const char *fmt, ...)
{
	char msg[PROTO_ERROR_MAX];
	va_list ap;

	if (!m->out[0].ok && m->out[0].error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	probe_outcome_fail(&m->out[0], stage, "%s: %s", m->chk.what, msg);
}

/* "43008 bytes" or "sweep choice 3 (43008 bytes, Ring/LL, 4 CTAs)". */
void measure_case_text(const struct measure *m, size_t c, char *buf, size_t len)
{
	const struct sweep_choice *ch = probe_case_choice(m->cfg, c);
	char how[64];

	if (!ch) {
		snprintf(buf, len, "%zu bytes", m->w->bytes[probe_case_size(m->cfg, c)]);
		return;
	}
	sweep_choice_text(ch, how, sizeof how);
	snprintf(buf, len, "sweep choice %zu (%zu bytes, %s)", c - m->w->nsizes, ch->bytes, how);
}

/* The case waited for changed (while replaying): say so in messages and to the launcher. */
void measure_note_case(struct measure *m, int c)
{
	char text[128];

	if (c == m->cur_case)
		return;
	m->cur_case = c;
	if (m->step_label && c >= 0) {
		measure_case_text(m, (size_t)c, text, sizeof text);
		snprintf(m->chk.what, sizeof m->chk.what, "%s of %s", m->step_label, text);
	}
	measure_kick(m);
}

/* Wait until, on every local rank, `ev` (or, when ev is NULL, the whole stream) has
 * completed, polling NCCL's asynchronous error state meanwhile. slot >= 0 selects
 * stop[slot] as the event. Returns 0, or -1 with the failure recorded. */
int measure_wait_ranks(struct measure *m, int slot)
{
	struct timespec pause = {0, 20 * 1000};
	int rc = -1;

	for (;;) {
		int done = 0;

		for (int k = 0; k < m->s->nlocal; k++) {
			struct rank_state *r = &m->rs[k];
			cudaError_t q = slot >= 0 ? cudaEventQuery(r->stop[slot])
			                          : cudaStreamQuery(r->stream);
			ncclResult_t async = ncclSuccess;

			if (q == cudaSuccess)
				done++;
			else if (q != cudaErrorNotReady)
				CUDACHECK(&m->chk, q);
			if (r->comm) {
				NCCLCHECK(&m->chk, NULL, ncclCommGetAsyncError(r->comm, &async));
				if (async != ncclSuccess && async != ncclInProgress)
					NCCLCHECK(&m->chk, r->comm, async);
			}
		}
		if (done == m->s->nlocal)
			break;
		if (probe_now() > m->chk.deadline) {
			check_failf(&m->chk, "timed out: no progress for %g s (--step-timeout); "
			            "communicators aborted", m->s->cfg->step_timeout_s);
			goto out;
		}
		nanosleep(&pause, NULL);
	}
	rc = 0;
out:
	return rc;
}

/* Wait for every local communicator to leave ncclInProgress (non-blocking init,
 * group end, finalize, window registration). Returns 0, or -1 with the failure recorded. */
int measure_wait_comms(struct measure *m)
{
	struct timespec pause = {0, 100 * 1000};
	int rc = -1;

	for (;;) {
		int pending = 0;

		for (int k = 0; k < m->s->nlocal; k++) {
			ncclResult_t st = ncclSuccess;

			if (!m->rs[k].comm)
				continue;
			NCCLCHECK(&m->chk, NULL, ncclCommGetAsyncError(m->rs[k].comm, &st));
			if (st == ncclInProgress)
				pending++;
			else
				NCCLCHECK(&m->chk, m->rs[k].comm, st);
		}
		if (!pending)
			break;
		if (probe_now() > m->chk.deadline) {
			check_failf(&m->chk, "timed out: communicator still in progress after %g s "
			            "(--step-timeout)", m->s->cfg->step_timeout_s);
			goto out;
		}
		nanosleep(&pause, NULL);
	}
	rc = 0;
out:
	return rc;
}

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

int measure_group_each(struct measure *m, bool set_device, const char *call,
                       measure_rank_fn fn, void *ctx)
{
	int rc = -1;

	NCCLCHECK(&m->chk, NULL, ncclGroupStart());
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];
		cudaError_t ce = set_device ? cudaSetDevice(r->device) : cudaSuccess;
		ncclResult_t res;

		if (ce != cudaSuccess) {
			ncclGroupEnd();
			check_cuda_failed(&m->chk, "cudaSetDevice", ce, __FILE__, __LINE__);
			goto out;
		}
		res = fn(m, r, ctx);
		if (res != ncclSuccess && res != ncclInProgress) {
			ncclGroupEnd();
			if (check_nccl_result(&m->chk, r->comm, res, call, __FILE__, __LINE__) != 0)
				goto out;
		}
	}
	NCCLCHECK(&m->chk, NULL, ncclGroupEnd());
	if (measure_wait_comms(m) != 0)
		goto out;
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

/* One all-reduce per local rank, as one group: of slice `slice` of `bytes`, or of the
 * one-element barrier (SLICE_BARRIER) or vote (SLICE_VOTE) buffer. */
/* What allreduce_rank enqueues: a slice of `bytes` (count elements), or a one-element
 * buffer (SLICE_BARRIER, SLICE_VOTE). */
struct allreduce_args {
	size_t bytes;
	long slice;
	size_t count;
};

static ncclResult_t allreduce_rank(struct measure *m, struct rank_state *r, void *ctx)
{
	const struct allreduce_args *a = ctx;
	size_t off;

	if (a->slice == SLICE_BARRIER)
		return ncclAllReduce(r->barrier, r->barrier, 1, ncclFloat32, ncclSum, r->comm,
		                     r->stream);
	if (a->slice == SLICE_VOTE)
		return ncclAllReduce(r->vote, r->vote, 1, ncclFloat32, ncclSum, r->comm, r->stream);
	off = (size_t)a->slice * probe_slice_stride(a->bytes);
	return ncclAllReduce((char *)r->send + off, (char *)r->recv + off, a->count,
	                     nccl_types[m->w->dtype], ncclSum, r->comm, r->stream);
}

int measure_enqueue_allreduce(struct measure *m, size_t bytes, long slice)
{
	struct allreduce_args a = {bytes, slice, bytes / proto_dtype_size(m->w->dtype)};

	return measure_group_each(m, false, "ncclAllReduce", allreduce_rank, &a);
}

/* Write the inputs of size `size`'s slices on every local rank; out of place also poison
 * the outputs (all bits set is a NaN in bf16, f16 and f32) so an op that writes nothing
 * is caught. Every case of a size works on these same slices. */
int measure_load_inputs(struct measure *m, size_t size)
{
	size_t bytes = m->w->bytes[size];
	int ops = proto_workload_ops(m->w, size);
	size_t stride = probe_slice_stride(bytes), count = bytes / proto_dtype_size(m->w->dtype);
	size_t span = stride * (size_t)ops;
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		for (int op = 0; op < ops; op++)
			numeric_fill(m->host + (size_t)op * stride, m->w->dtype, r->rank, (size_t)op,
			             count, m->maxv);
		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaMemcpy(r->send, m->host, span, cudaMemcpyHostToDevice));
		if (m->w->out_of_place)
			CUDACHECK(&m->chk, cudaMemsetAsync(r->recv, 0xff, span, r->stream));
		/* Our streams do not synchronise with the legacy default stream the copy
		 * used: make sure it has landed before any all-reduce reads it. */
		CUDACHECK(&m->chk, cudaDeviceSynchronize());
	}
	rc = 0;
out:
	return rc;
}

/* Whether rank `rank`'s check of case c is to be spoiled (--test-corrupt-rank/-choice). */
static bool spoil(const struct measure *m, int rank, size_t c)
{
	const struct probe_config *cfg = m->cfg;
	int who = cfg->corrupt_rank >= 0 ? cfg->corrupt_rank : cfg->corrupt_choice >= 0 ? 0 : -1;

	if (rank != who)
		return false;
	return cfg->corrupt_choice < 0 ||
	       (probe_case_choice(cfg, c) && (int)(c - m->w->nsizes) == cfg->corrupt_choice);
}

/* Copy every rank's results of case c back and compare every element with the exact
 * sum. A mismatch on local rank k sets m->bad[k] and writes the reason into
 * out[k].cases[c].error; the caller decides what it means. With --test-corrupt-rank,
 * that rank's first element is set to all ones (a NaN) on the GPU first, so the check -
 * device copy, comparison, report - must catch it. Returns 0, or -1 on a CUDA failure
 * (recorded). */
int measure_check_outputs(struct measure *m, size_t c)
{
	size_t size = probe_case_size(m->cfg, c), bytes = m->w->bytes[size];
	int ops = proto_workload_ops(m->w, size);
	size_t stride = probe_slice_stride(bytes), esize = proto_dtype_size(m->w->dtype);
	size_t count = bytes / esize, span = stride * (size_t)ops;
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		m->bad[k] = false;
		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		if (spoil(m, r->rank, c)) {
			CUDACHECK(&m->chk, cudaMemset(r->recv, 0xff, esize));
			CUDACHECK(&m->chk, cudaDeviceSynchronize());
		}
		CUDACHECK(&m->chk, cudaMemcpy(m->host, r->recv, span, cudaMemcpyDeviceToHost));
		for (int op = 0; op < ops && !m->bad[k]; op++) {
			double want = 0, got = 0;
			size_t bad = numeric_check(m->host + (size_t)op * stride, m->w->dtype,
			                           m->s->nranks, (size_t)op, count, m->maxv, &want, &got);

			if (bad != (size_t)-1) {
				m->bad[k] = true;
				snprintf(m->out[k].cases[c].error, sizeof m->out[k].cases[c].error,
				         "wrong sum on rank %d: all-reduce %d of %d, element %zu of %zu: "
				         "expected %g, got %g (%s, %s, %d ranks)", r->rank, op + 1, ops, bad,
				         count, want, got, proto_dtype_name(m->w->dtype),
				         m->w->out_of_place ? "out of place" : "in place", m->s->nranks);
			}
		}
	}
	rc = 0;
out:
	return rc;
}

/* Capture case c's ops, each on its own slice, into case c's graph on every local rank. */
int measure_capture(struct measure *m, size_t c)
{
	size_t size = probe_case_size(m->cfg, c);
	int ops = proto_workload_ops(m->w, size), rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		/* Thread-local: NCCL's own threads may make CUDA calls while we capture. */
		CUDACHECK(&m->chk, cudaStreamBeginCapture(r->stream, cudaStreamCaptureModeThreadLocal));
		r->capturing = true;
	}
	/* with --compute-us, each all-reduce follows its kernel, as a layer's follows its GEMM */
	for (int op = 0; op < ops; op++)
		if (measure_compute_launch(m) != 0 ||
		    measure_enqueue_allreduce(m, m->w->bytes[size], op) != 0)
			goto out;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		r->capturing = false;
		CUDACHECK(&m->chk, cudaStreamEndCapture(r->stream, &r->graph[c]));
	}
	rc = 0;
out:
	return rc;
}

void measure_end_captures(struct measure *m)
{
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];
		cudaGraph_t g = NULL;

		if (!r->capturing)
			continue;
		r->capturing = false;
		cudaSetDevice(r->device);
		if (cudaStreamEndCapture(r->stream, &g) == cudaSuccess && g)
			cudaGraphDestroy(g);
		cudaGetLastError();   /* the capture was invalidated: that error is expected */
	}
}

int measure_instantiate(struct measure *m, size_t c)
{
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaGraphInstantiate(&r->exec[c], r->graph[c], 0));
	}
	rc = 0;
out:
	return rc;
}

/* Destroy case c's graph on every local rank. Can't fail. */
void measure_drop_case(struct measure *m, size_t c)
{
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		if (!r->graph)
			continue;
		cudaSetDevice(r->device);
		if (r->exec[c])
			cudaGraphExecDestroy(r->exec[c]);
		if (r->graph[c])
			cudaGraphDestroy(r->graph[c]);
		r->exec[c] = NULL;
		r->graph[c] = NULL;
	}
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
	poll_log(m);   /* the last of NCCL's warnings */
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
