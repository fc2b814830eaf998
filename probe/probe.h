/* probe.h - vocabulary shared by the modules of nccltune-probe: the run configuration,
 * the steps a run goes through (each mapped to a protocol stage), and the outcome one
 * rank hands back to whoever reports. Nothing here touches CUDA or NCCL, so the
 * CUDA-free parts of the probe (options, merging, numbers) can be tested anywhere. */
#ifndef NCCLTUNE_PROBE_H
#define NCCLTUNE_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "proto.h"

/* How ranks are started. AUTO picks MPI when a launcher's variables are present (and
 * MPI support was built), else one process per GPU. */
enum probe_launch { PROBE_LAUNCH_AUTO, PROBE_LAUNCH_PROCESS, PROBE_LAUNCH_ALL, PROBE_LAUNCH_MPI };

/* How a run that measured and verified ends (docs/probe-protocol.md, --teardown).
 * CLEAN finalizes and destroys every communicator, then exits normally. FAST releases
 * the graphs, buffers, events and streams, leaves the communicators to the process
 * exit (_exit: the driver releases the CUDA context and all GPU memory with it) and so
 * skips NCCL's destroy, which waits up to half a second for its idle proxy thread.
 * AUTO is FAST for the process and all launch modes and CLEAN under MPI, where other
 * processes (possibly on other hosts) and MPI_Finalize are involved. A failed run
 * always aborts its communicators, whatever the choice. */
enum probe_teardown { PROBE_TEARDOWN_AUTO, PROBE_TEARDOWN_CLEAN, PROBE_TEARDOWN_FAST };

/* The steps of a measurement, in order. Their wall time is reported as "phases_s";
 * a failure inside one is reported with the protocol stage probe_step_stage() gives. */
enum probe_step {
	PROBE_STEP_CUDA_INIT,    /* device count, context, streams, buffers */
	PROBE_STEP_NCCL_INIT,    /* communicator creation until it is ready */
	PROBE_STEP_EAGER,        /* un-captured all-reduces: connect lazily-built channels */
	PROBE_STEP_CAPTURE,      /* --ops all-reduces captured into one graph per rank */
	PROBE_STEP_INSTANTIATE,  /* cudaGraphInstantiate */
	PROBE_STEP_WARMUP,       /* untimed replays */
	PROBE_STEP_TIMING,       /* timed replays */
	PROBE_STEP_VERIFY,       /* reset inputs, one more replay, exact check */
	PROBE_STEP_TEARDOWN,     /* graphs, memory and (clean) communicators released */
	PROBE_STEP_COUNT
};

struct probe_config {
	struct proto_workload w;
	enum probe_launch launch;
	enum probe_teardown teardown;
	int gpus;                /* 0: every visible GPU */
	double step_timeout_s;   /* longest any single step may take */
	bool verbose;            /* progress on stderr */
	bool no_env_check;       /* --no-env-check: leave NCCL variables to NCCL alone */
	int corrupt_rank;        /* --test-corrupt-rank: that rank's result is spoiled before
	                            the exact check (a testing aid); -1 none */
};

/* What one rank measured, or why it stopped. ms[size * iters + i] is the wall time of
 * timed replay i of graph `size` (all ops), in milliseconds, on this rank's stream. */
struct probe_outcome {
	bool ok;
	enum proto_stage stage;         /* when !ok */
	char error[PROTO_ERROR_MAX];    /* when !ok */
	double phase_s[PROBE_STEP_COUNT];
	int nsizes;
	int iters;
	double *ms;                     /* nsizes * iters, owned; NULL when !ok */
	int nccl_version;               /* ncclGetVersion code, 0 when unknown */
};

/* "cuda_init", "nccl_init", ... (the keys of "phases_s"). Can't fail. */
const char *probe_step_name(enum probe_step s);

/* The protocol stage a failure inside step `s` is reported with. Can't fail. */
enum proto_stage probe_step_stage(enum probe_step s);

/* Monotonic wall clock in seconds. Can't fail. */
double probe_now(void);

/* Release what an outcome owns and reset it to "not ok, no data". Accepts NULL. */
void probe_outcome_clear(struct probe_outcome *o);

/* Set o to a failure at `stage` with a printf-style message (keeps phase times). */
void probe_outcome_fail(struct probe_outcome *o, enum proto_stage stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Render a NCCL version code (22803) as "2.28.3" into buf. Can't fail. */
void probe_nccl_version_string(int code, char *buf, size_t len);

/* The failure a watchdog reports when `step` stayed silent for silent_s: when the run had
 * already failed (o not NULL, !o->ok with a message) that failure, which is the cause,
 * with a note that the clean-up then hung; else the silent step itself. Writes the
 * message (prefixed "rank R: " when rank >= 0) and returns the stage. Can't fail. */
enum proto_stage probe_watchdog_failure(const struct probe_config *cfg,
                                        const struct probe_outcome *o, int rank,
                                        enum probe_step step, double silent_s, char *msg,
                                        size_t len);

/* Each captured all-reduce works on its own slice of the rank's buffer (see
 * docs/measurement.md); slices of a `bytes`-sized message start this many bytes apart
 * (512-byte aligned, as a framework's allocator would hand out tensors). Can't fail. */
size_t probe_slice_stride(size_t bytes);

/* Bytes of device memory one rank needs for w: --ops slices of the largest size, twice
 * out of place. Can't fail. */
size_t probe_buffer_bytes(const struct proto_workload *w);

/* Merge the outcomes of all ranks into one protocol report: the first failing rank's
 * failure (ranks are scanned in order), else per size and per timed replay the slowest
 * rank's time, divided by --ops, summarised by proto_stats_compute. phase_s gets the
 * per-step maximum over ranks. Returns 0, or -1 when out of memory (r then holds an
 * init failure saying so). */
int probe_merge(const struct probe_config *cfg, const struct probe_outcome *ranks, int nranks,
                struct proto_report *r, double phase_s[PROBE_STEP_COUNT]);

#endif
