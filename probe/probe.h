/* probe.h - vocabulary shared by the modules of nccltune-probe: the run configuration,
 * the steps a run goes through (each mapped to a protocol stage), and the outcome one
 * rank hands back to whoever reports. Nothing here touches CUDA or NCCL, so the
 * CUDA-free parts of the probe (options, merging, numbers) can be tested anywhere. */
#ifndef NCCLTUNE_PROBE_H
#define NCCLTUNE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "sweep.h"

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
	PROBE_STEP_CAPTURE,      /* a case's ops captured into its own graph per rank */
	PROBE_STEP_INSTANTIATE,  /* cudaGraphInstantiate */
	PROBE_STEP_WARMUP,       /* untimed replays */
	PROBE_STEP_TIMING,       /* timed replays */
	PROBE_STEP_VERIFY,       /* reset inputs, one replay, exact check (before timing) */
	PROBE_STEP_TEARDOWN,     /* graphs, memory and (clean) communicators released */
	PROBE_STEP_COUNT
};

struct probe_config {
	struct proto_workload w;
	enum probe_launch launch;
	enum probe_teardown teardown;
	int gpus;                /* 0: every visible GPU */
	int ranks_per_gpu;       /* --ranks-per-gpu: ranks sharing each GPU (1: one each) */
	double step_timeout_s;   /* longest any single step may take */
	bool verbose;            /* progress on stderr */
	bool no_env_check;       /* --no-env-check: leave NCCL variables to NCCL alone */
	int corrupt_rank;        /* --test-corrupt-rank: that rank's result is spoiled before
	                            the exact check (a testing aid); -1 none */
	int corrupt_choice;      /* --test-corrupt-choice: only that sweep choice's check is
	                            spoiled (on corrupt_rank, default 0); -1 every check */
	int stall_choice;        /* --test-stall-choice: rank 0 stops before the first timed
	                            replay of that sweep choice, as if it hung; -1 none */
	bool stall_teardown;     /* --test-stall-teardown: rank 0 stops for good when its
	                            teardown starts, as if finalize or destroy hung */
	char sweep_file[256];    /* --sweep FILE as given; "" none */
	char nccl_path[4096];    /* --nccl PATH as given; "" none (main.c re-executes on it) */
	struct sweep_plan sweep; /* --sweep's choices (nchoices 0: a plain run) */
};

/* A case is what one graph measures. Cases 0 .. nsizes-1 are the --bytes sizes under the
 * process's own configuration (the "results"); in a sweep, cases nsizes + i are the
 * file's choices i (forced through the plugin). A plain run is one case per size. */
size_t probe_case_count(const struct probe_config *cfg);

/* The size index (into w.bytes) of case c. Can't fail for c < probe_case_count. */
size_t probe_case_size(const struct probe_config *cfg, size_t c);

/* The sweep choice of case c, or NULL for a plain size. */
const struct sweep_choice *probe_case_choice(const struct probe_config *cfg, size_t c);

/* The verdict on one case, per rank. UNDECIDED until the case was prepared. */
enum probe_case_status {
	PROBE_CASE_UNDECIDED = 0,
	PROBE_CASE_KEPT,       /* captured, verified, timed (with the others) */
	PROBE_CASE_FAILED,     /* this rank found it not available or wrong: stage, error */
	PROBE_CASE_DROPPED,    /* another rank did (the ranks vote: all drop it alike) */
};

#define PROBE_CASE_ERROR_MAX PROTO_SWEEP_ERROR_MAX

/* What one rank knows of one case. Plain old data: it travels through pipes and MPI. */
struct probe_case_result {
	int32_t status;                       /* enum probe_case_status */
	int32_t stage;                        /* FAILED: enum proto_stage */
	char error[PROBE_CASE_ERROR_MAX];     /* FAILED */
	struct proto_decision nccl;           /* what NCCL ran (rank 0's process only) */
};

/* The compute kernel of --compute-us timed alone on one rank (no all-reduce): per timed
 * replay of a graph of --ops kernels, microseconds per kernel. Plain old data: it
 * travels through pipes and MPI with the outcome. */
#define PROBE_COMPUTE_SAMPLES 32
struct probe_compute_samples {
	int32_t n;                            /* samples taken; 0: no compute */
	int32_t ctas;                         /* CTAs each kernel ran on (resolved) */
	double us[PROBE_COMPUTE_SAMPLES];
};

/* What one rank measured, or why it stopped. ms[case * iters + i] is the wall time of
 * timed replay i of graph `case` (all ops), in milliseconds, on this rank's stream (0 for
 * a case that was not kept). */
struct probe_outcome {
	bool ok;
	enum proto_stage stage;         /* when !ok */
	char error[PROTO_ERROR_MAX];    /* when !ok */
	double phase_s[PROBE_STEP_COUNT];
	int ncases;
	int iters;
	double *ms;                     /* ncases * iters, owned; NULL when !ok */
	struct probe_case_result *cases;   /* ncases, owned (ok or not); NULL when none */
	bool in_flight_known;           /* !ok: the failure happened while case ... */
	int in_flight_case;             /* ... in_flight_case was being prepared or replayed */
	int nccl_version;               /* ncclGetVersion code, 0 when unknown */
	bool measured;                  /* every case checked and timed: only teardown left */
	char warning[PROTO_WARNING_MAX];   /* what went wrong without costing the measurement
	                                      (a teardown that hung and was aborted); "" none */
	struct probe_compute_samples compute;   /* --compute-us: the kernel alone */
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

/* Whether a watchdog that found `step` silent for silent_s must keep the results: o
 * (may be NULL) was measured (every case checked and timed) and only its teardown hung.
 * Then writes the warning the report carries into o_warning and returns true. Can't
 * fail. */
bool probe_watchdog_keeps(const struct probe_outcome *o, enum probe_step step, double silent_s,
                          char *warning, size_t len);

/* Each captured all-reduce works on its own slice of the rank's buffer (see
 * docs/measurement.md); slices of a `bytes`-sized message start this many bytes apart
 * (512-byte aligned, as a framework's allocator would hand out tensors). Can't fail. */
size_t probe_slice_stride(size_t bytes);

/* Bytes of device memory one rank needs for w: per size its ops' slices, the largest
 * such span, twice out of place. Every case of a size (the plain size and its sweep
 * choices) works on the same slices. Can't fail. */
size_t probe_buffer_bytes(const struct proto_workload *w);

/* The size whose slices need the most memory (the one probe_buffer_bytes is made of).
 * Can't fail. */
size_t probe_buffer_size_index(const struct proto_workload *w);

/* Merge the outcomes of all ranks into one protocol report: the first failing rank's
 * failure (ranks are scanned in order; see probe_report_failure), else per case and per
 * timed replay the slowest rank's time, divided by the case's ops, summarised by
 * proto_stats_compute: plain cases become results, sweep choices sweep entries (a
 * choice's failure from the first rank that found it, its decision from rank 0).
 * phase_s gets the per-step maximum over ranks. r owns its sweep entries afterwards
 * (proto_report_clear). Returns 0, or -1 when out of memory (r then holds an init
 * failure saying so). */
int probe_merge(const struct probe_config *cfg, const struct probe_outcome *ranks, int nranks,
                struct proto_report *r, double phase_s[PROBE_STEP_COUNT]);

/* A failure report for `failure` (its stage and error); in a sweep run also the choice
 * in flight (failure->in_flight_known and a choice case) and the entries that were final
 * (a choice any of the ranks[] with cases found not available or wrong), index
 * ascending. ranks may be NULL (nranks 0). r owns its sweep entries afterwards. Can't
 * fail (out of memory: no entries). */
void probe_report_failure(const struct probe_config *cfg, const struct probe_outcome *failure,
                          const struct probe_outcome *ranks, int nranks, struct proto_report *r);

#endif
