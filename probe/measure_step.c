/* measure_step.c - the primitives of one measurement, shared by its flow (measure.c), its
 * cases (measure_cases.c) and what a server's step adds (measure_server.c): the step clock
 * and the launcher's heartbeat, failures, waits that poll NCCL's error state, one NCCL
 * call per local rank in a group, the all-reduces, the inputs and their exact check, and
 * the graphs of a case. It calls none of its siblings. */
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

void measure_poll_log(struct measure *m)
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
	measure_poll_log(m);
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
