/* measure.c - communicator -> per case: eager, capture, check -> warm-up -> timed replays
 * -> teardown, for the ranks one process drives (see measure.h, docs/measurement.md).
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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "callcheck.h"
#include "numeric.h"

/* Timed replays the host keeps queued ahead of the GPU: enough that the GPU never waits
 * for the host between replays, few enough that one thread driving several GPUs never
 * blocks on a full launch queue (which would deadlock a collective). */
#define MEASURE_WINDOW 16
#define MEASURE_RING (2 * MEASURE_WINDOW)

/* Special "slices" of enqueue_allreduce: one element outside the slices. */
#define SLICE_BARRIER (-1)
#define SLICE_VOTE (-2)

/* One rank this process drives. */
struct rank_state {
	int rank, device;
	cudaStream_t stream;
	ncclComm_t comm;
	void *send, *recv;          /* recv == send in place */
	float *barrier;             /* one element, for the pre-replay barrier all-reduce */
	float *vote;                /* one element: the ranks' verdict on a sweep choice */
	cudaEvent_t start[MEASURE_RING], stop[MEASURE_RING];
	int nevents;                /* events created in start/stop */
	cudaGraph_t *graph;         /* per case */
	cudaGraphExec_t *exec;      /* per case */
	bool capturing;
};

struct measure {
	const struct measure_setup *s;
	const struct probe_config *cfg;
	const struct proto_workload *w;
	struct rank_state *rs;
	struct probe_check chk;
	struct probe_outcome *out;  /* out[0] holds the failure */
	unsigned char *host;        /* fill / read-back staging, one rank's slices */
	size_t buf_bytes;
	int maxv;                   /* inputs are integers in [0, maxv] */
	double step_started;
	bool step_open;             /* step_started belongs to a step not yet ended */
	size_t ncases;
	bool *keep;                 /* per case: its graph is kept for the replays */
	bool *bad;                  /* per local rank: this rank's verdict on the case at hand */
	float *votes;               /* per local rank: host side of the vote */
	int cur_case;               /* the case being prepared or waited for; -1 none */
	int rank0;                  /* local index of global rank 0, or -1 */
	const char *step_label;     /* "timed replays", ... while replaying */
	struct sweep_replay slot_item[MEASURE_RING];
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
		m->s->on_step(m->s->arg, m->chk.step, m->cur_case);
}

/* New lines of NCCL's log (its warnings go to stderr); cheap when there are none. */
static void poll_log(struct measure *m)
{
	if (m->s->log)
		nccllog_reader_poll(m->s->log);
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
	poll_log(m);
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

/* A failure of the probe's own at `stage` (not the current step's), unless one is
 * already recorded. */
static void fail_at(struct measure *m, enum proto_stage stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_at(struct measure *m, enum proto_stage stage, const char *fmt, ...)
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
static void case_text(const struct measure *m, size_t c, char *buf, size_t len)
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
static void note_case(struct measure *m, int c)
{
	char text[128];

	if (c == m->cur_case)
		return;
	m->cur_case = c;
	if (m->step_label && c >= 0) {
		case_text(m, (size_t)c, text, sizeof text);
		snprintf(m->chk.what, sizeof m->chk.what, "%s of %s", m->step_label, text);
	}
	kick(m);
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
		CUDACHECK(&m->chk, cudaMalloc(&r->send, m->buf_bytes));
		r->recv = r->send;
		if (m->w->out_of_place)
			CUDACHECK(&m->chk, cudaMalloc(&r->recv, m->buf_bytes));
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

/* One all-reduce per local rank, as one group: of slice `slice` of `bytes`, or of the
 * one-element barrier (SLICE_BARRIER) or vote (SLICE_VOTE) buffer. */
static int enqueue_allreduce(struct measure *m, size_t bytes, long slice)
{
	ncclDataType_t dt = nccl_types[m->w->dtype];
	size_t esize = proto_dtype_size(m->w->dtype);
	int rc = -1;

	NCCLCHECK(&m->chk, NULL, ncclGroupStart());
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];
		ncclResult_t res;

		if (slice == SLICE_BARRIER) {
			res = ncclAllReduce(r->barrier, r->barrier, 1, ncclFloat32, ncclSum, r->comm,
			                    r->stream);
		} else if (slice == SLICE_VOTE) {
			res = ncclAllReduce(r->vote, r->vote, 1, ncclFloat32, ncclSum, r->comm, r->stream);
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

/* Write the inputs of size `size`'s slices on every local rank; out of place also poison
 * the outputs (all bits set is a NaN in bf16, f16 and f32) so an op that writes nothing
 * is caught. Every case of a size works on these same slices. */
static int load_inputs(struct measure *m, size_t size)
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
static int check_outputs(struct measure *m, size_t c)
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
static int capture(struct measure *m, size_t c)
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
	for (int op = 0; op < ops; op++)
		if (enqueue_allreduce(m, m->w->bytes[size], op) != 0)
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

static int instantiate(struct measure *m, size_t c)
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
static void drop_case(struct measure *m, size_t c)
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
		drop_case(m, c);
}

/* Queue one replay of case c on every local rank: barrier all-reduce, start event,
 * graph, stop event. The barrier lines the ranks up on the GPU, so the start events of
 * all ranks fire together and launch skew stays out of the measured interval. */
static int enqueue_replay(struct measure *m, int slot, int c)
{
	int rc = -1;

	if (enqueue_allreduce(m, 0, SLICE_BARRIER) != 0)
		goto out;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaEventRecord(r->start[slot], r->stream));
		CUDACHECK(&m->chk, cudaGraphLaunch(r->exec[c], r->stream));
		CUDACHECK(&m->chk, cudaEventRecord(r->stop[slot], r->stream));
	}
	rc = 0;
out:
	return rc;
}

/* Wait for the replay queued as number j (ring slot j % MEASURE_RING) and, when timed,
 * read its time into each rank's ms. */
static int finish_replay(struct measure *m, int j)
{
	int slot = j % MEASURE_RING, rc = -1;
	const struct sweep_replay *it = &m->slot_item[slot];

	note_case(m, it->case_idx);
	if (wait_ranks(m, slot) != 0)
		goto out;
	for (int k = 0; it->sample >= 0 && k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];
		float ms = 0;

		CUDACHECK(&m->chk, cudaEventElapsedTime(&ms, r->start[slot], r->stop[slot]));
		m->out[k].ms[(size_t)it->case_idx * (size_t)m->w->iters + (size_t)it->sample] = ms;
	}
	kick(m);
	rc = 0;
out:
	return rc;
}

/* Where replays come from: a schedule (the timed ones), or `count` untimed replays of
 * each kept case in case order (warm-up), or of the one case `only` (a check). */
struct replay_source {
	struct sweep_schedule *sched;
	int count;
	int only;         /* -1: every kept case */
	size_t c;
	int k;
};

static bool source_next(struct measure *m, struct replay_source *src, struct sweep_replay *out)
{
	if (src->sched)
		return sweep_schedule_next(src->sched, out);
	while (src->c < m->ncases) {
		bool mine = src->only < 0 ? m->keep[src->c] : (int)src->c == src->only;

		if (mine && src->k < src->count) {
			out->case_idx = (int)src->c;
			out->sample = -1;
			src->k++;
			return true;
		}
		src->c++;
		src->k = 0;
	}
	return false;
}

/* --test-stall-choice: rank 0 stops for good before the first timed replay of that
 * choice, as a choice whose graph hung would; the watchdog or the other ranks' step
 * timeout ends the run. */
static void maybe_stall(struct measure *m, const struct sweep_replay *it)
{
	if (m->cfg->stall_choice < 0 || m->rank0 < 0 || it->sample != 0 ||
	    it->case_idx != (int)m->w->nsizes + m->cfg->stall_choice)
		return;
	note_case(m, it->case_idx);
	fprintf(stderr, "nccltune-probe: rank 0: --test-stall-choice %d: stopping before its "
	        "first timed replay\n", m->cfg->stall_choice);
	for (;;)
		sleep(1);
}

/* Every replay of src, the host at most MEASURE_WINDOW replays ahead of the GPU. */
static int run_replays(struct measure *m, struct replay_source *src)
{
	struct sweep_replay it;
	int queued = 0, rc = -1;

	while (source_next(m, src, &it)) {
		if (queued >= MEASURE_WINDOW && finish_replay(m, queued - MEASURE_WINDOW) != 0)
			goto out;
		maybe_stall(m, &it);
		m->slot_item[queued % MEASURE_RING] = it;
		if (enqueue_replay(m, queued % MEASURE_RING, it.case_idx) != 0)
			goto out;
		queued++;
	}
	for (int j = queued > MEASURE_WINDOW ? queued - MEASURE_WINDOW : 0; j < queued; j++)
		if (finish_replay(m, j) != 0)
			goto out;
	if (wait_ranks(m, -1) != 0)
		goto out;
	rc = 0;
out:
	return rc;
}

/* The ranks agree on case c: each local rank says whether it found the case bad
 * (m->bad), one all-reduce sums the verdicts, and *any tells whether some rank of the
 * communicator did. Sweep choices are dropped on every rank alike this way, so the
 * replays that follow stay collectives every rank takes part in. */
static int vote(struct measure *m, bool *any)
{
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		m->votes[k] = m->bad[k] ? 1.0f : 0.0f;
		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaMemcpyAsync(r->vote, &m->votes[k], sizeof *r->vote,
		                                   cudaMemcpyHostToDevice, r->stream));
	}
	if (enqueue_allreduce(m, 0, SLICE_VOTE) != 0 || wait_ranks(m, -1) != 0)
		goto out;
	*any = false;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaMemcpy(&m->votes[k], r->vote, sizeof *r->vote,
		                              cudaMemcpyDeviceToHost));
		*any = *any || m->votes[k] > 0.5f;
	}
	rc = 0;
out:
	return rc;
}

/* After a vote that went against case c: FAILED (with the reason already in
 * cases[c].error, at `stage`) on the local ranks that found it bad, DROPPED on the
 * others; the graph goes. */
static void reject_case(struct measure *m, size_t c, enum proto_stage stage)
{
	for (int k = 0; k < m->s->nlocal; k++) {
		struct probe_case_result *cr = &m->out[k].cases[c];

		cr->status = m->bad[k] ? PROBE_CASE_FAILED : PROBE_CASE_DROPPED;
		cr->stage = (int32_t)stage;
		if (!m->bad[k])
			cr->error[0] = '\0';
	}
	drop_case(m, c);
	m->keep[c] = false;
}

static int force(struct measure *m, const struct sweep_choice *ch)
{
	if (sweep_plugin_force(m->s->plugin, ch) != 0) {
		check_failf(&m->chk, "nccltune's tuner plugin refused the forced answer");
		return -1;
	}
	return 0;
}

/* Set every local rank's verdict to "not available" when the plugin says the forced pair
 * is IGNORE; returns whether it did. */
static bool judge_ignored(struct measure *m, size_t c, const struct sweep_verdict *v)
{
	const struct sweep_choice *ch = probe_case_choice(m->cfg, c);
	const char *a = proto_nccl_algo_name(ch->algo), *p = proto_nccl_proto_name(ch->proto);

	for (int k = 0; k < m->s->nlocal; k++) {
		m->bad[k] = v->ignored > 0;
		if (m->bad[k])
			snprintf(m->out[k].cases[c].error, sizeof m->out[k].cases[c].error,
			         "not available: %s/%s is not usable here (NCCL's cost table has it "
			         "IGNORE)", a ? a : "*", p ? p : "*");
	}
	return v->ignored > 0;
}

/* Eager all-reduces of case c's size, under c's forced answer when it is a choice: NCCL
 * builds connections lazily, at the first collective that needs them, and a forced
 * algorithm may need ones the others did not. Returns 0 with *usable telling whether a
 * choice survived the plugin's verdict (always true for a plain size), or -1 (run
 * failure, recorded). */
static int eager(struct measure *m, size_t c, bool *usable)
{
	const struct sweep_choice *ch = probe_case_choice(m->cfg, c);
	size_t size = probe_case_size(m->cfg, c), bytes = m->w->bytes[size];
	struct sweep_verdict v = {0, 0, 0};
	bool any = false;
	char text[128];
	int rc = -1;

	*usable = true;
	case_text(m, c, text, sizeof text);
	step_begin(m, PROBE_STEP_EAGER, "eager all-reduces of %s (before capture)", text);
	if (load_inputs(m, size) != 0)
		goto out;
	if (ch) {
		m->s->plugin->record(1);
		if (force(m, ch) != 0)
			goto out;
	}
	if (enqueue_allreduce(m, bytes, 0) != 0 || enqueue_allreduce(m, bytes, 0) != 0)
		goto out;
	if (ch && force(m, NULL) != 0)
		goto out;
	if (enqueue_allreduce(m, 0, SLICE_BARRIER) != 0 || wait_ranks(m, -1) != 0)
		goto out;
	if (ch) {
		sweep_plugin_drain(m->s->plugin, bytes, &v);
		/* one rank: NCCL copies (or does nothing) and never asks a tuner */
		if (m->s->nranks > 1 && v.forced == 0) {
			fail_at(m, PROTO_STAGE_ENV, "NCCL did not ask nccltune's tuner plugin about the "
			        "all-reduces of %zu bytes, so nothing can be forced (is NCCL_TUNER_PLUGIN "
			        "loaded by this NCCL? NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING shows "
			        "it)", bytes);
			goto out;
		}
		judge_ignored(m, c, &v);
		if (vote(m, &any) != 0)
			goto out;
		if (any) {
			reject_case(m, c, PROTO_STAGE_ENV);
			*usable = false;
		}
	}
	step_end(m);
	rc = 0;
out:
	return rc;
}

/* Prepare case c: eager, capture (its TUNING lines give the decision), instantiate,
 * check. A plain size that fails its check fails the run; a sweep choice the plugin
 * calls IGNORE or that gives a wrong sum on any rank is dropped on all ranks and the
 * run goes on. Returns 0, or -1 on a run failure (recorded). */
static int prepare_case(struct measure *m, size_t c)
{
	const struct sweep_choice *ch = probe_case_choice(m->cfg, c);
	size_t size = probe_case_size(m->cfg, c), bytes = m->w->bytes[size];
	int ops = proto_workload_ops(m->w, size), rc = -1;
	struct replay_source one = {NULL, 1, (int)c, 0, 0};
	struct sweep_verdict v = {0, 0, 0};
	struct nccllog_reader *log = m->rank0 >= 0 ? m->s->log : NULL;
	bool usable, any = false;
	char text[128];

	m->cur_case = (int)c;
	case_text(m, c, text, sizeof text);
	if (eager(m, c, &usable) != 0)
		goto out;
	if (!usable) {
		rc = 0;
		goto out;
	}

	step_begin(m, PROBE_STEP_CAPTURE, "capture of %d all-reduces of %s", ops, text);
	if (log)
		nccllog_window_begin(log, bytes);
	if ((ch && force(m, ch) != 0) || capture(m, c) != 0 || (ch && force(m, NULL) != 0))
		goto out;
	if (log)
		nccllog_window_end(log, ops, &m->out[m->rank0].cases[c].nccl);
	step_end(m);

	step_begin(m, PROBE_STEP_INSTANTIATE, "instantiation of the graph of %s", text);
	if (instantiate(m, c) != 0)
		goto out;
	step_end(m);
	if (ch) {
		sweep_plugin_drain(m->s->plugin, bytes, &v);
		m->s->plugin->record(0);
	}

	/* In place the slices hold the eager ops' sums: reset the inputs, replay the graph
	 * once and check every element of every op. The timed replays reuse this graph. */
	step_begin(m, PROBE_STEP_VERIFY, "check of the graph of %s", text);
	m->step_label = NULL;
	if (load_inputs(m, size) != 0 || run_replays(m, &one) != 0 || check_outputs(m, c) != 0)
		goto out;
	if (!ch) {
		for (int k = 0; k < m->s->nlocal; k++) {
			if (m->bad[k]) {
				check_failf(&m->chk, "%s", m->out[k].cases[c].error);
				goto out;
			}
		}
	} else {
		bool ignored = false;

		/* the capture asked the plugin again; an IGNORE there outranks the check */
		for (int k = 0; k < m->s->nlocal && v.ignored > 0; k++)
			m->bad[k] = false;
		if (v.ignored > 0)
			ignored = judge_ignored(m, c, &v);
		if (vote(m, &any) != 0)
			goto out;
		if (any) {
			reject_case(m, c, ignored ? PROTO_STAGE_ENV : PROTO_STAGE_VERIFY);
			step_end(m);
			rc = 0;
			goto out;
		}
	}
	step_end(m);
	for (int k = 0; k < m->s->nlocal; k++)
		m->out[k].cases[c].status = PROBE_CASE_KEPT;
	m->keep[c] = true;
	rc = 0;
out:
	if (ch && m->s->plugin) {
		m->s->plugin->force(NULL);
		m->s->plugin->record(0);
	}
	return rc;
}

/* Warm-up of every kept graph, then the timed replays: a plain run in case order, one
 * round; a sweep in the file's rounds, each in its seeded order. */
static int replay_all(struct measure *m)
{
	struct replay_source warm = {NULL, m->w->warmup, -1, 0, 0};
	struct replay_source timed = {NULL, 0, -1, 0, 0};
	struct sweep_schedule sched;
	bool sweep = m->cfg->sweep.nchoices > 0;
	int rc = -1;

	memset(&sched, 0, sizeof sched);
	step_begin(m, PROBE_STEP_WARMUP, "%d warm-up replays of each graph", m->w->warmup);
	m->step_label = "warm-up replays";
	if (run_replays(m, &warm) != 0)
		goto out;
	step_end(m);

	if (sweep_schedule_init(&sched, m->ncases, m->keep, m->w->iters,
	                        sweep ? m->cfg->sweep.rounds : 1, m->cfg->sweep.seed, sweep) != 0) {
		check_failf(&m->chk, "out of host memory for the replay order");
		goto out;
	}
	timed.sched = &sched;
	if (sweep)
		step_begin(m, PROBE_STEP_TIMING, "%d timed replays of each graph in %d interleaved "
		           "rounds (seed %llu)", m->w->iters, m->cfg->sweep.rounds,
		           (unsigned long long)m->cfg->sweep.seed);
	else
		step_begin(m, PROBE_STEP_TIMING, "%d timed replays of each graph", m->w->iters);
	m->step_label = "timed replays";
	if (run_replays(m, &timed) != 0)
		goto out;
	step_end(m);
	rc = 0;
out:
	m->step_label = NULL;
	sweep_schedule_free(&sched);
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
			goto forget;
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
	return ok;
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
	if (s->cfg->sweep.nchoices > 0 && !s->plugin) {
		check_failf(&m.chk, "--sweep without the plugin's control interface");
		goto out;
	}
	if (setup_host(&m) != 0 || setup_cuda(&m) != 0)
		goto out;
	step_end(&m);

	step_begin(&m, PROBE_STEP_NCCL_INIT, "NCCL communicator init (%d ranks)", s->nranks);
	if (ncclGetVersion(&version) == ncclSuccess)
		for (int k = 0; k < s->nlocal; k++)
			out[k].nccl_version = version;
	if (setup_nccl(&m) != 0)
		goto out;
	step_end(&m);

	for (size_t c = 0; c < m.ncases; c++)
		if (prepare_case(&m, c) != 0)
			goto out;
	m.cur_case = -1;
	if (replay_all(&m) != 0)
		goto out;
	m.cur_case = -1;
	rc = 0;
out:
	step_end(&m);  /* the failing step's time up to here counts too */
	in_flight = m.cur_case;
	t = probe_now();
	m.cur_case = -1;
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
