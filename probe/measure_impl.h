/* measure_impl.h - the inside of one measurement, shared by its flow (measure.c: set-up,
 * teardown), its primitives (measure_step.c: steps, waits, enqueue, inputs, checks,
 * graphs), its cases (measure_cases.c: forced sweep choices, eager, votes, capture,
 * preparation, replays) and a server's additions (measure_server.c). Calls go one way:
 * measure.c -> measure_cases.c -> measure_server.c -> measure_step.c.
 * Nothing outside probe/measure*.c includes it. */
#ifndef NCCLTUNE_MEASURE_IMPL_H
#define NCCLTUNE_MEASURE_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "callcheck.h"
#include "measure.h"

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
	bool nccl_mem;              /* send/recv from ncclMemAlloc (--window symmetric) */
#if MEASURE_HAVE_WINDOW
	ncclWindow_t win_send, win_recv;   /* registered symmetric windows; NULL none */
#endif
#if MEASURE_HAVE_COMPUTE
	cudaLibrary_t spin_lib;     /* the PTX of --compute-us, loaded; NULL none */
	cudaKernel_t spin;
#endif
	int compute_ctas;           /* the kernel's CTAs (resolved: one per SM by default) */
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

/* ---- measure_step.c: the primitives ---- */
/* Refresh the step deadline and tell the launcher we are alive (and where). */
void measure_kick(struct measure *m);
/* New lines of NCCL's log (its warnings go to stderr); cheap when there are none. */
void measure_poll_log(struct measure *m);
/* Start step `step`, described by fmt (messages name it): its clock, the NCCL log, the
 * launcher's heartbeat. */
void measure_step_begin(struct measure *m, enum probe_step step, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* End the open step, adding its time to every local rank's phase_s. */
void measure_step_end(struct measure *m);
/* A failure of the probe's own at `stage` (not the current step's), unless one is
 * already recorded. */
void measure_fail(struct measure *m, enum proto_stage stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "43008 bytes" or "sweep choice 3 (43008 bytes, Ring/LL, 4 CTAs)" into buf. */
void measure_case_text(const struct measure *m, size_t c, char *buf, size_t len);
/* The case waited for changed (while replaying): say so in messages and to the launcher. */
void measure_note_case(struct measure *m, int c);
/* Wait until, on every local rank, stop[slot] (slot >= 0) or the whole stream (slot < 0)
 * has completed, polling NCCL's asynchronous error state meanwhile. Returns 0, or -1
 * with the failure recorded. */
int measure_wait_ranks(struct measure *m, int slot);
/* One all-reduce per local rank, as one group: of slice `slice` of `bytes`, or of the
 * one-element barrier (SLICE_BARRIER) or vote (SLICE_VOTE) buffer. 0, or -1 recorded. */
int measure_enqueue_allreduce(struct measure *m, size_t bytes, long slice);
/* Write the inputs of size `size`'s slices on every local rank (out of place also
 * poisoning the outputs). 0, or -1 on a CUDA failure (recorded). */
int measure_load_inputs(struct measure *m, size_t size);
/* Check every element of every op of case c on every local rank against the exact sum;
 * a mismatch sets m->bad[k] and out[k].cases[c].error. 0, or -1 on a CUDA failure. */
int measure_check_outputs(struct measure *m, size_t c);
/* Instantiate case c's graph on every local rank. 0, or -1 with the failure recorded. */
int measure_instantiate(struct measure *m, size_t c);
/* Destroy case c's graph on every local rank. Can't fail. */
void measure_drop_case(struct measure *m, size_t c);

/* Wait for every local communicator to leave ncclInProgress. 0, or -1 recorded. */
int measure_wait_comms(struct measure *m);

/* One NCCL call per local rank, `fn(m, r, ctx)`, inside one NCCL group (as NCCL asks of a
 * process that drives several ranks), each on its rank's device first when set_device.
 * The group is closed on every path; the first call that fails is recorded under the
 * name `call` against its rank's communicator (and nothing is waited for: the caller
 * aborts); after a group that went through, every communicator is waited for. 0, or -1
 * with the failure recorded. */
typedef ncclResult_t (*measure_rank_fn)(struct measure *m, struct rank_state *r, void *ctx);
int measure_group_each(struct measure *m, bool set_device, const char *call,
                       measure_rank_fn fn, void *ctx);

/* ---- measure_server.c: --compute-us and --window symmetric ---- */
/* Load the compute kernel on every local rank and resolve its CTAs (one per SM unless
 * given). Nothing to do (0) without --compute-us. 0, or -1 with the failure recorded. */
int measure_compute_setup(struct measure *m);
/* One compute kernel on every local rank's stream (captured when the stream captures).
 * 0 without --compute-us; 0, or -1 recorded. */
int measure_compute_launch(struct measure *m);
/* Time the kernel alone: a graph of --ops kernels per local rank, replayed
 * min(--iters, PROBE_COMPUTE_SAMPLES) times, into out[k].compute. 0 without
 * --compute-us; 0, or -1 recorded. */
int measure_compute_alone(struct measure *m);
/* Unload the kernel. Accepts a rank that never loaded it. Can't fail. */
void measure_compute_release(struct measure *m);
/* Rank r's send (and, out of place, recv) buffer: ncclMemAlloc with --window symmetric,
 * else cudaMalloc, of m->buf_bytes. 0, or -1 recorded (what was allocated stays in r
 * for measure_buffers_free). */
int measure_buffers_alloc(struct measure *m, struct rank_state *r);
/* Free what measure_buffers_alloc allocated, each as it was allocated. Can't fail. */
void measure_buffers_free(struct rank_state *r);
/* Register every local rank's buffers as symmetric windows (a collective, one group);
 * 0 without --window. 0, or -1 recorded. */
int measure_window_register(struct measure *m);
/* Deregister them (one group). 0 without --window; 0, or -1 recorded. */
int measure_window_release(struct measure *m);

/* ---- measure_cases.c ---- */
/* Capture case c's ops, each on its own slice (each after a compute kernel with
 * --compute-us), into case c's graph on every local rank. 0, or -1 with the failure
 * recorded. */
int measure_capture(struct measure *m, size_t c);
/* End every capture a local rank's stream still has open (a failed capture's), so that
 * no capture-unsafe call of this thread meets one; the partial graphs are dropped.
 * Can't fail. (measure_step.c) */
void measure_end_captures(struct measure *m);
/* Prepare case c: eager, capture, instantiate, check. A plain size that fails its check
 * fails the run; a sweep choice that is IGNORE or sums wrong on any rank is dropped on
 * all ranks. Returns 0, or -1 on a run failure (recorded). */
int measure_prepare_case(struct measure *m, size_t c);
/* Warm-up of every kept graph, then the timed replays: a plain run in case order, one
 * round; a sweep in the file's rounds, each in its seeded order. 0, or -1 recorded. */
int measure_replay_all(struct measure *m);

#endif
