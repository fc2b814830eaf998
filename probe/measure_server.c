/* measure_server.c - what a server's step adds to the measurement (docs/probe-protocol.md,
 * "Compute between the all-reduces" and "Symmetric windows"): the busy kernel of
 * --compute-us, loaded from hand-written PTX and launched before every captured
 * all-reduce, and timed alone; and --window symmetric, buffers from ncclMemAlloc
 * registered with ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC).
 *
 * The kernel needs no nvcc: the PTX below is JIT-compiled by the driver through the
 * runtime's library API (cudaLibraryLoadData, CUDA 12+), which reaches libcuda through
 * libcudart as every other call does. Linking libcuda itself would make the probe
 * unloadable where there is no driver, where it must still print --help, --capabilities
 * and a fingerprint. */
#include "measure_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One kernel: every thread of every CTA spins on %globaltimer (ns, the GPU's global
 * clock) until `ns` have passed since it started, so the kernel holds its CTAs for the
 * duration whatever the SM clock. PTX ISA 7.0 for sm_75 and later (the driver JITs it
 * for the GPU at hand; CUDA 13 supports nothing older). */
static const char spin_ptx[] =
	".version 7.0\n"
	".target sm_75\n"
	".address_size 64\n"
	"\n"
	".visible .entry nccltune_spin(.param .u64 nccltune_spin_ns)\n"
	"{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b64 %rd<5>;\n"
	"\n"
	"\tld.param.u64 %rd1, [nccltune_spin_ns];\n"
	"\tmov.u64 %rd2, %globaltimer;\n"
	"$L_spin:\n"
	"\tmov.u64 %rd3, %globaltimer;\n"
	"\tsub.s64 %rd4, %rd3, %rd2;\n"
	"\tsetp.lt.u64 %p1, %rd4, %rd1;\n"
	"\t@%p1 bra $L_spin;\n"
	"\tret;\n"
	"}\n";

#define SPIN_THREADS 128   /* per CTA */

#if MEASURE_HAVE_COMPUTE
static dim3 dim3_of(unsigned x)
{
	dim3 d = {x, 1, 1};

	return d;
}
#endif
#define ALONE_WARMUP 2     /* untimed replays of the kernel-only graph */

#if MEASURE_HAVE_COMPUTE

int measure_compute_setup(struct measure *m)
{
	int rc = -1;

	if (m->w->compute_us <= 0)
		return 0;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];
		int sms = 0;

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaLibraryLoadData(&r->spin_lib, spin_ptx, NULL, NULL, 0, NULL,
		                                       NULL, 0));
		CUDACHECK(&m->chk, cudaLibraryGetKernel(&r->spin, r->spin_lib, "nccltune_spin"));
		CUDACHECK(&m->chk, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
		                                          r->device));
		r->compute_ctas = m->w->compute_ctas > 0 ? m->w->compute_ctas : sms;
	}
	rc = 0;
out:
	return rc;
}

int measure_compute_launch(struct measure *m)
{
	unsigned long long ns = (unsigned long long)(m->w->compute_us * 1000.0 + 0.5);
	void *args[] = {&ns};
	int rc = -1;

	if (m->w->compute_us <= 0)
		return 0;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaLaunchKernel((const void *)r->spin,
		                                    dim3_of((unsigned)r->compute_ctas),
		                                    dim3_of(SPIN_THREADS), args, 0, r->stream));
	}
	rc = 0;
out:
	return rc;
}

/* The kernel-only graph: --ops kernels back to back, as the step has them, on every
 * local rank. */
static int capture_alone(struct measure *m, cudaGraph_t *g, cudaGraphExec_t *x)
{
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaStreamBeginCapture(r->stream, cudaStreamCaptureModeThreadLocal));
		r->capturing = true;
	}
	for (int op = 0; op < m->w->ops; op++)
		if (measure_compute_launch(m) != 0)
			goto out;
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		r->capturing = false;
		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		CUDACHECK(&m->chk, cudaStreamEndCapture(r->stream, &g[k]));
	}
	/* Only once every capture has ended: instantiate is not capture-safe, and while any
	 * local rank's stream of this thread still captures (thread-local mode) CUDA refuses
	 * it (cudaErrorStreamCaptureUnsupported: the rig's two ranks on one GPU). */
	for (int k = 0; k < m->s->nlocal; k++) {
		CUDACHECK(&m->chk, cudaSetDevice(m->rs[k].device));
		CUDACHECK(&m->chk, cudaGraphInstantiate(&x[k], g[k], 0));
	}
	rc = 0;
out:
	measure_end_captures(m);   /* a failed one's, before its caller destroys graphs */
	return rc;
}

/* One replay of the kernel-only graph on every local rank; timed: between start[0] and
 * stop[0], read into sample i of each rank's outcome. */
static int replay_alone(struct measure *m, cudaGraphExec_t *x, int i)
{
	int rc = -1;

	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		CUDACHECK(&m->chk, cudaSetDevice(r->device));
		if (i >= 0)
			CUDACHECK(&m->chk, cudaEventRecord(r->start[0], r->stream));
		CUDACHECK(&m->chk, cudaGraphLaunch(x[k], r->stream));
		if (i >= 0)
			CUDACHECK(&m->chk, cudaEventRecord(r->stop[0], r->stream));
	}
	if (measure_wait_ranks(m, i >= 0 ? 0 : -1) != 0)
		goto out;
	for (int k = 0; k < m->s->nlocal && i >= 0; k++) {
		struct rank_state *r = &m->rs[k];
		float ms = 0;

		CUDACHECK(&m->chk, cudaEventElapsedTime(&ms, r->start[0], r->stop[0]));
		m->out[k].compute.us[i] = (double)ms * 1000.0 / m->w->ops;
		m->out[k].compute.n = i + 1;
		m->out[k].compute.ctas = r->compute_ctas;
	}
	measure_kick(m);
	rc = 0;
out:
	return rc;
}

int measure_compute_alone(struct measure *m)
{
	cudaGraph_t *g = NULL;
	cudaGraphExec_t *x = NULL;
	int n = m->w->iters < PROBE_COMPUTE_SAMPLES ? m->w->iters : PROBE_COMPUTE_SAMPLES;
	int rc = -1;

	if (m->w->compute_us <= 0)
		return 0;
	measure_step_begin(m, PROBE_STEP_TIMING, "timing of %d x the %g us compute kernel alone",
	                   m->w->ops, m->w->compute_us);
	g = calloc((size_t)m->s->nlocal, sizeof *g);
	x = calloc((size_t)m->s->nlocal, sizeof *x);
	if (!g || !x) {
		check_failf(&m->chk, "out of host memory for %d graphs", m->s->nlocal);
		goto out;
	}
	if (capture_alone(m, g, x) != 0)
		goto out;
	for (int i = -ALONE_WARMUP; i < n; i++)
		if (replay_alone(m, x, i < 0 ? -1 : i) != 0)
			goto out;
	measure_step_end(m);
	rc = 0;
out:
	for (int k = 0; k < m->s->nlocal && g && x; k++) {
		cudaSetDevice(m->rs[k].device);
		if (x[k])
			cudaGraphExecDestroy(x[k]);
		if (g[k])
			cudaGraphDestroy(g[k]);
	}
	free(g);
	free(x);
	return rc;
}

void measure_compute_release(struct measure *m)
{
	for (int k = 0; k < m->s->nlocal; k++) {
		struct rank_state *r = &m->rs[k];

		if (!r->spin_lib)
			continue;
		cudaSetDevice(r->device);
		cudaLibraryUnload(r->spin_lib);
		r->spin_lib = NULL;
		r->spin = NULL;
	}
}

#else /* !MEASURE_HAVE_COMPUTE: a CUDA runtime older than 12.0 */

int measure_compute_setup(struct measure *m)
{
	if (m->w->compute_us <= 0)
		return 0;
	check_failf(&m->chk, "--compute-us: this probe was built against a CUDA runtime "
	            "without cudaLibraryLoadData (CUDA 12.0+)");
	return -1;
}

int measure_compute_launch(struct measure *m)
{
	(void)m;
	return 0;
}

int measure_compute_alone(struct measure *m)
{
	(void)m;
	return 0;
}

void measure_compute_release(struct measure *m)
{
	(void)m;
}

#endif /* MEASURE_HAVE_COMPUTE */

#if MEASURE_HAVE_WINDOW

/* Buffers of one rank: ncclMemAlloc (cuMem, what a symmetric window needs) with
 * --window symmetric, else cudaMalloc. */
int measure_buffers_alloc(struct measure *m, struct rank_state *r)
{
	int rc = -1;

	if (!m->w->window_symmetric) {
		CUDACHECK(&m->chk, cudaMalloc(&r->send, m->buf_bytes));
		r->recv = r->send;
		if (m->w->out_of_place)
			CUDACHECK(&m->chk, cudaMalloc(&r->recv, m->buf_bytes));
		return 0;
	}
	NCCLCHECK(&m->chk, NULL, ncclMemAlloc(&r->send, m->buf_bytes));
	r->nccl_mem = true;
	r->recv = r->send;
	if (m->w->out_of_place)
		NCCLCHECK(&m->chk, NULL, ncclMemAlloc(&r->recv, m->buf_bytes));
	rc = 0;
out:
	return rc;
}

/* One buffer as it was allocated. Can't fail (teardown: errors are not acted on). */
static void buffer_free(const struct rank_state *r, void *p)
{
	if (r->nccl_mem)
		ncclMemFree(p);
	else
		cudaFree(p);
}

void measure_buffers_free(struct rank_state *r)
{
	if (r->recv && r->recv != r->send)
		buffer_free(r, r->recv);
	if (r->send)
		buffer_free(r, r->send);
	r->send = r->recv = NULL;
}

static ncclResult_t register_rank(struct measure *m, struct rank_state *r, void *ctx)
{
	ncclResult_t res;

	(void)ctx;
	res = ncclCommWindowRegister(r->comm, r->send, m->buf_bytes, &r->win_send,
	                             NCCL_WIN_COLL_SYMMETRIC);
	if (res == ncclSuccess && r->recv != r->send)
		res = ncclCommWindowRegister(r->comm, r->recv, m->buf_bytes, &r->win_recv,
		                             NCCL_WIN_COLL_SYMMETRIC);
	return res;
}

int measure_window_register(struct measure *m)
{
	if (!m->w->window_symmetric)
		return 0;
	/* collective: every rank registers its buffers, in one group per process */
	return measure_group_each(m, true, "ncclCommWindowRegister", register_rank, NULL);
}

static ncclResult_t release_rank(struct measure *m, struct rank_state *r, void *ctx)
{
	ncclResult_t res = ncclSuccess;

	(void)m;
	(void)ctx;
	if (r->win_recv)
		res = ncclCommWindowDeregister(r->comm, r->win_recv);
	if (r->win_send && (res == ncclSuccess || res == ncclInProgress))
		res = ncclCommWindowDeregister(r->comm, r->win_send);
	r->win_recv = r->win_send = NULL;
	return res;
}

int measure_window_release(struct measure *m)
{
	if (!m->w->window_symmetric)
		return 0;
	return measure_group_each(m, false, "ncclCommWindowDeregister", release_rank, NULL);
}

#else /* !MEASURE_HAVE_WINDOW: NCCL headers older than 2.27 */

int measure_buffers_alloc(struct measure *m, struct rank_state *r)
{
	int rc = -1;

	CUDACHECK(&m->chk, cudaMalloc(&r->send, m->buf_bytes));
	r->recv = r->send;
	if (m->w->out_of_place)
		CUDACHECK(&m->chk, cudaMalloc(&r->recv, m->buf_bytes));
	rc = 0;
out:
	return rc;
}

void measure_buffers_free(struct rank_state *r)
{
	if (r->recv && r->recv != r->send)
		cudaFree(r->recv);
	if (r->send)
		cudaFree(r->send);
	r->send = r->recv = NULL;
}

int measure_window_register(struct measure *m)
{
	if (!m->w->window_symmetric)
		return 0;
	check_failf(&m->chk, "--window symmetric: this probe was built against NCCL headers "
	            "without symmetric windows (ncclCommWindowRegister, NCCL 2.27+)");
	return -1;
}

int measure_window_release(struct measure *m)
{
	(void)m;
	return 0;
}

#endif /* MEASURE_HAVE_WINDOW */
