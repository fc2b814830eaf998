/* measure.c - communicator -> eager -> capture -> warm-up -> timed replays -> exact check
 * -> teardown, for the ranks one process drives (see measure.h and docs/measurement.md).
 *
 * Nothing here blocks on the GPU: every wait polls the stream or event together with
 * ncclCommGetAsyncError and gives up at the step timeout, aborting the communicators,
 * so a hung configuration becomes a failure report instead of a stuck process. */
#include "measure.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "callcheck.h"
#include "numeric.h"

/* Timed replays the host keeps queued ahead of the GPU: enough that the GPU never waits
 * for the host between replays, few enough that one thread driving several GPUs never
 * blocks on a full launch queue (which would deadlock a collective). */
#define MEASURE_WINDOW 16
#define MEASURE_RING (2 * MEASURE_WINDOW)

/* One rank this process drives. */
struct rank_state {
	int rank, device;
	cudaStream_t stream;
	ncclComm_t comm;
	void *send, *recv;          /* recv == send in place */
	float *barrier;             /* one element, for the pre-replay barrier all-reduce */
	cudaEvent_t start[MEASURE_RING], stop[MEASURE_RING];
	int nevents;                /* events created in start/stop */
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	bool capturing;
};

struct measure {
	const struct measure_setup *s;
	const struct proto_workload *w;
	struct rank_state *rs;
	struct probe_check chk;
	struct probe_outcome *out;  /* out[0] holds the failure */
	unsigned char *host;        /* fill / read-back staging, one rank's slices */
	size_t buf_bytes;
	int maxv;                   /* inputs are integers in [0, maxv] */
	double step_started;
	bool step_open;             /* step_started belongs to a step not yet ended */
};

static const ncclDataType_t nccl_types[] = {
	[PROTO_DTYPE_BF16] = ncclBfloat16, [PROTO_DTYPE_F16] = ncclFloat16,
	[PROTO_DTYPE_F32] = ncclFloat32,
};

/* Refresh the step deadline and tell the launcher we are alive (and where). */
static void kick(struct measure *m)
{
	m->chk.deadline = probe_now() + m->s->cfg->step_timeout_s;
	if (m->s->on_step)
		m->s->on_step(m->s->arg, m->chk.step);
}

static void step_begin(struct measure *m, enum probe_step step, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void step_begin(struct measure *m, enum probe_step step, const char *fmt, ...)
{
	va_list ap;

	m->chk.step = step;
	va_start(ap, fmt);
	vsnprintf(m->chk.what, sizeof m->chk.what, fmt, ap);
	va_end(ap);
	m->step_started = probe_now();
	m->step_open = true;
	kick(m);
	if (m->s->cfg->verbose)
		fprintf(stderr, "nccltune-probe: rank %d: %s\n", m->rs[0].rank, m->chk.what);
}

static void step_end(struct measure *m)
{
	double dt = probe_now() - m->step_started;

	if (!m->step_open)
		return;
	m->step_open = false;
	for (int k = 0; k < m->s->nlocal; k++)
		m->out[k].phase_s[m->chk.step] += dt;
}

/* Wait until, on every local rank, `ev` (or, when ev is NULL, the whole stream) has
 * completed, polling NCCL's asynchronous error state meanwhile. slot >= 0 selects
 * stop[slot] as the event. Returns 0, or -1 with the failure recorded. */
static int wait_ranks(struct measure *m, int slot)
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
 * group end, finalize). Returns 0, or -1 with the failure recorded. */
static int wait_comms(struct measure *m)
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

/* Streams, buffers and events for every local rank. */
static int setup_cuda(struct measure *m)
{
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaFree(NULL));   /* create the context now, not later */
		CUDACHECK(&m->chk, cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
		CUDACHECK(&m->chk, cudaMalloc(&r->send, m->buf_bytes));
		r->recv = r->send;
		if (m->w->out_of_place)
			CUDACHECK(&m->chk, cudaMalloc(&r->recv, m->buf_bytes));
		CUDACHECK(&m->chk, cudaMalloc((void **)&r->barrier, sizeof *r->barrier));
		CUDACHECK(&m->chk, cudaMemset(r->barrier, 0, sizeof *r->barrier));
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

static int setup_nccl(struct measure *m)
{
	int rc = -1;
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;

	/* Non-blocking: init and every call return at once, so the probe can poll, time out
	 * and abort instead of hanging inside NCCL. */
	config.blocking = 0;
	NCCLCHECK(&m->chk, NULL, ncclGroupStart());
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];
		ncclResult_t res;

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		res = ncclCommInitRankConfig(&r->comm, m->s->nranks, m->s->id, r->rank, &config);
		if (res != ncclSuccess && res != ncclInProgress) {
			ncclGroupEnd();
			NCCLCHECK(&m->chk, r->comm, res);
		}
	}
	NCCLCHECK(&m->chk, NULL, ncclGroupEnd());
	if (wait_comms(m) != 0)
		goto out;
	rc = 0;
out:
	return rc;
}

/* One all-reduce per local rank, as one group. `slice` < 0: the barrier element. */
static int enqueue_allreduce(struct measure *m, size_t bytes, long slice)
{
	ncclDataType_t dt = nccl_types[m->w->dtype];
	size_t esize = proto_dtype_size(m->w->dtype);
	int rc = -1;

	NCCLCHECK(&m->chk, NULL, ncclGroupStart());
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];
		ncclResult_t res;

		if (slice < 0) {
			res = ncclAllReduce(r->barrier, r->barrier, 1, ncclFloat32, ncclSum, r->comm,
			                    r->stream);
		} else {
			size_t off = (size_t)slice * probe_slice_stride(bytes);

			res = ncclAllReduce((char *)r->send + off, (char *)r->recv + off,
			                    bytes / esize, dt, ncclSum, r->comm, r->stream);
		}
		if (res != ncclSuccess && res != ncclInProgress) {
			ncclGroupEnd();
			NCCLCHECK(&m->chk, r->comm, res);
		}
	}
	NCCLCHECK(&m->chk, NULL, ncclGroupEnd());
	if (wait_comms(m) != 0)
		goto out;
	rc = 0;
out:
	return rc;
}

/* Write every slice's inputs on every local rank; out of place also poison the outputs
 * (all bits set is a NaN in bf16, f16 and f32) so an op that writes nothing is caught. */
static int load_inputs(struct measure *m, size_t bytes)
{
	size_t stride = probe_slice_stride(bytes), count = bytes / proto_dtype_size(m->w->dtype);
	size_t span = stride * (size_t)m->w->ops;
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		for (int op = 0; op < m->w->ops; op++)
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

/* Copy every rank's results back and compare every element with the exact sum. With
 * --test-corrupt-rank, that rank's first element is set to all ones (a NaN) on the GPU
 * first, so the check - device copy, comparison, report - must catch it. */
static int check_outputs(struct measure *m, size_t bytes)
{
	size_t stride = probe_slice_stride(bytes), esize = proto_dtype_size(m->w->dtype);
	size_t count = bytes / esize, span = stride * (size_t)m->w->ops;
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		if (r->rank == m->s->cfg->corrupt_rank) {
			CUDACHECK(&m->chk, cudaMemset(r->recv, 0xff, esize));
			CUDACHECK(&m->chk, cudaDeviceSynchronize());
		}
		CUDACHECK(&m->chk, cudaMemcpy(m->host, r->recv, span, cudaMemcpyDeviceToHost));
		for (int op = 0; op < m->w->ops; op++) {
			double want = 0, got = 0;
			size_t bad = numeric_check(m->host + (size_t)op * stride, m->w->dtype,
			                           m->s->nranks, (size_t)op, count, m->maxv, &want, &got);

			if (bad != (size_t)-1) {
				check_failf(&m->chk, "wrong sum on rank %d: all-reduce %d of %d, element "
				            "%zu of %zu: expected %g, got %g (%s, %s, %d ranks)", r->rank,
				            op + 1, m->w->ops, bad, count, want, got,
				            proto_dtype_name(m->w->dtype),
				            m->w->out_of_place ? "out of place" : "in place", m->s->nranks);
				goto out;
			}
		}
	}
	rc = 0;
out:
	return rc;
}

/* Capture --ops all-reduces, each on its own slice, into one graph per local rank. */
static int capture(struct measure *m, size_t bytes)
{
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		/* Thread-local: NCCL's own threads may make CUDA calls while we capture. */
		CUDACHECK(&m->chk, cudaStreamBeginCapture(r->stream, cudaStreamCaptureModeThreadLocal));
		r->capturing = true;
	}
	for (int op = 0; op < m->w->ops; op++)
		if (enqueue_allreduce(m, bytes, op) != 0)
			goto out;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		r->capturing = false;
		CUDACHECK(&m->chk, cudaStreamEndCapture(r->stream, &r->graph));
	}
	rc = 0;
out:
	return rc;
}

/* Stop any capture still open, so the stream is usable for teardown. Can't fail. */
static void end_captures(struct measure *m)
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

static int instantiate(struct measure *m)
{
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaGraphInstantiate(&r->exec, r->graph, 0));
	}
	rc = 0;
out:
	return rc;
}

static void drop_graphs(struct measure *m)
{
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		cudaSetDevice(r->device);
		if (r->exec)
			cudaGraphExecDestroy(r->exec);
		if (r->graph)
			cudaGraphDestroy(r->graph);
		r->exec = NULL;
		r->graph = NULL;
	}
}

/* Queue one replay on every local rank: barrier all-reduce, start event, graph, stop
 * event. The barrier lines the ranks up on the GPU, so the start events of all ranks
 * fire together and launch skew stays out of the measured interval. */
static int enqueue_replay(struct measure *m, int slot)
{
	int rc = -1;

	if (enqueue_allreduce(m, 0, -1) != 0)
		goto out;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaEventRecord(r->start[slot], r->stream));
		CUDACHECK(&m->chk, cudaGraphLaunch(r->exec, r->stream));
		CUDACHECK(&m->chk, cudaEventRecord(r->stop[slot], r->stream));
	}
	rc = 0;
out:
	return rc;
}

/* Read the finished replay `i` (in ring slot i % MEASURE_RING) into each rank's ms. */
static int collect(struct measure *m, int size_idx, int i)
{
	int slot = i % MEASURE_RING, rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];
		float ms = 0;

		CUDACHECK(&m->chk, cudaEventElapsedTime(&ms, r->start[slot], r->stop[slot]));
		m->out[k].ms[(size_t)size_idx * (size_t)m->w->iters + (size_t)i] = ms;
	}
	rc = 0;
out:
	return rc;
}

/* `n` replays; timed ones (size_idx >= 0) are collected. The host stays at most
 * MEASURE_WINDOW replays ahead. */
static int replays(struct measure *m, int n, int size_idx)
{
	int rc = -1;

	for (int i = 0; i < n; i++) {
		if (i >= MEASURE_WINDOW) {
			if (wait_ranks(m, (i - MEASURE_WINDOW) % MEASURE_RING) != 0)
				goto out;
			if (size_idx >= 0 && collect(m, size_idx, i - MEASURE_WINDOW) != 0)
				goto out;
			kick(m);
		}
		if (enqueue_replay(m, i % MEASURE_RING) != 0)
			goto out;
	}
	if (wait_ranks(m, -1) != 0)
		goto out;
	for (int i = n > MEASURE_WINDOW ? n - MEASURE_WINDOW : 0; size_idx >= 0 && i < n; i++)
		if (collect(m, size_idx, i) != 0)
			goto out;
	rc = 0;
out:
	return rc;
}

static int measure_size(struct measure *m, int size_idx)
{
	size_t bytes = m->w->bytes[size_idx];
	int rc = -1;

	step_begin(m, PROBE_STEP_EAGER, "eager all-reduces of %zu bytes (before capture)", bytes);
	if (load_inputs(m, bytes) != 0 || enqueue_allreduce(m, bytes, 0) != 0 ||
	    enqueue_allreduce(m, bytes, 0) != 0 || enqueue_allreduce(m, 0, -1) != 0 ||
	    wait_ranks(m, -1) != 0)
		goto out;
	step_end(m);

	step_begin(m, PROBE_STEP_CAPTURE, "capture of %d all-reduces of %zu bytes", m->w->ops,
	           bytes);
	if (capture(m, bytes) != 0)
		goto out;
	step_end(m);

	step_begin(m, PROBE_STEP_INSTANTIATE, "instantiation of the graph of %zu bytes", bytes);
	if (instantiate(m) != 0)
		goto out;
	step_end(m);

	step_begin(m, PROBE_STEP_WARMUP, "%d warm-up replays of %zu bytes", m->w->warmup, bytes);
	if (replays(m, m->w->warmup, -1) != 0)
		goto out;
	step_end(m);

	step_begin(m, PROBE_STEP_TIMING, "%d timed replays of %zu bytes", m->w->iters, bytes);
	if (replays(m, m->w->iters, size_idx) != 0)
		goto out;
	step_end(m);

	/* In place, every replay re-reduced the buffer; reset the inputs and replay the
	 * very graph that was timed once more, then check every element of every op. */
	step_begin(m, PROBE_STEP_VERIFY, "check of the graph of %zu bytes", bytes);
	if (load_inputs(m, bytes) != 0 || replays(m, 1, -1) != 0 || check_outputs(m, bytes) != 0)
		goto out;
	step_end(m);
	rc = 0;
out:
	drop_graphs(m);
	return rc;
}

/* Release everything; communicators are finalized when all went well, aborted
 * otherwise (abort also stops kernels that wait for a peer that will never come).
 * With --teardown fast a run that went well leaves its communicators alone: the
 * process ends with _exit right after reporting and the driver releases them with
 * the CUDA context. What NCCL's destroy would cost is mostly waiting for its proxy
 * service thread, which sleeps in poll() for up to 500 ms when idle (src/proxy.cc).
 * Returns `ok`, or false when a clean finalize failed (recorded in m->chk). */
static bool teardown(struct measure *m, bool ok)
{
	bool keep_comms = ok && m->s->cfg->teardown == PROBE_TEARDOWN_FAST;

	end_captures(m);
	if (ok && !keep_comms) {
		m->chk.deadline = probe_now() + m->s->cfg->step_timeout_s;
		for (int k = 0; k < m->s->nlocal && ok; k++) {
			ncclResult_t res = ncclCommFinalize(m->rs[k].comm);

			if (res != ncclSuccess && res != ncclInProgress) {
				check_nccl_result(&m->chk, m->rs[k].comm, res, "ncclCommFinalize",
				                  __FILE__, __LINE__);
				ok = false;
			}
		}
		if (ok && wait_comms(m) != 0)
			ok = false;
	}
	for (int k = 0; k < m->s->nlocal && !keep_comms; k++) {
		struct rank_state *r = &m->rs[k];

		if (!r->comm)
			continue;
		if (ok)
			ncclCommDestroy(r->comm);
		else
			ncclCommAbort(r->comm);
		r->comm = NULL;
	}
	drop_graphs(m);
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		if (cudaSetDevice(r->device) != cudaSuccess)
			continue;
		if (r->stream)
			cudaStreamSynchronize(r->stream);
		for (int e = 0; e < r->nevents; e++) {
			cudaEventDestroy(r->start[e]);
			cudaEventDestroy(r->stop[e]);
		}
		if (r->recv && r->recv != r->send)
			cudaFree(r->recv);
		if (r->send)
			cudaFree(r->send);
		if (r->barrier)
			cudaFree(r->barrier);
		if (r->stream)
			cudaStreamDestroy(r->stream);
		memset(r, 0, sizeof *r);
	}
	return ok;
}

int measure_run(const struct measure_setup *s, struct probe_outcome *out)
{
	struct measure m;
	int version = 0, rc = -1;
	double t;

	memset(&m, 0, sizeof m);
	m.s = s;
	m.w = &s->cfg->w;
	m.out = out;
	m.chk.out = &out[0];
	m.buf_bytes = probe_buffer_bytes(m.w) / (m.w->out_of_place ? 2 : 1);
	m.maxv = numeric_max_value(s->nranks);
	m.rs = calloc((size_t)s->nlocal, sizeof *m.rs);
	if (!m.rs) {
		probe_outcome_fail(&out[0], PROTO_STAGE_INIT, "out of memory for %d ranks", s->nlocal);
		return -1;
	}
	for (int k = 0; k < s->nlocal; k++) {
		m.rs[k].rank = s->ranks[k];
		m.rs[k].device = s->devices[k];
		out[k].nsizes = (int)m.w->nsizes;
		out[k].iters = m.w->iters;
	}
	step_begin(&m, PROBE_STEP_CUDA_INIT, "CUDA setup of %d GPU(s)", s->nlocal);
	if (m.maxv == 0) {
		check_failf(&m.chk, "%d ranks: too many to keep every sum exact in bf16", s->nranks);
		goto out;
	}
	if (s->cfg->corrupt_rank >= s->nranks) {
		check_failf(&m.chk, "--test-corrupt-rank %d: there are only %d rank(s)",
		            s->cfg->corrupt_rank, s->nranks);
		goto out;
	}
	m.host = malloc(m.buf_bytes);
	if (!m.host) {
		check_failf(&m.chk, "out of host memory for %zu bytes of staging", m.buf_bytes);
		goto out;
	}
	for (int k = 0; k < s->nlocal; k++) {
		out[k].ms = calloc(m.w->nsizes * (size_t)m.w->iters, sizeof *out[k].ms);
		if (!out[k].ms) {
			check_failf(&m.chk, "out of host memory for %zu timings", m.w->nsizes *
			            (size_t)m.w->iters);
			goto out;
		}
	}
	if (setup_cuda(&m) != 0)
		goto out;
	step_end(&m);

	step_begin(&m, PROBE_STEP_NCCL_INIT, "NCCL communicator init (%d ranks)", s->nranks);
	if (ncclGetVersion(&version) == ncclSuccess)
		for (int k = 0; k < s->nlocal; k++)
			out[k].nccl_version = version;
	if (setup_nccl(&m) != 0)
		goto out;
	step_end(&m);

	for (size_t i = 0; i < m.w->nsizes; i++)
		if (measure_size(&m, (int)i) != 0)
			goto out;
	rc = 0;
out:
	step_end(&m);  /* the failing step's time up to here counts too */
	t = probe_now();
	step_begin(&m, PROBE_STEP_TEARDOWN, "teardown");
	m.step_open = false;
	if (!teardown(&m, rc == 0))
		rc = -1;
	for (int k = 0; k < s->nlocal; k++) {
		out[k].phase_s[PROBE_STEP_TEARDOWN] = probe_now() - t;
		out[k].ok = rc == 0;
		if (rc != 0 && k > 0) {
			out[k].stage = out[0].stage;
			snprintf(out[k].error, sizeof out[k].error, "%s", out[0].error);
		}
		if (rc != 0) {
			free(out[k].ms);
			out[k].ms = NULL;
		}
	}
	free(m.host);
	free(m.rs);
	return rc;
}
