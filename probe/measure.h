/* measure.h - the measurement itself, for the ranks one process drives: communicator ->
 * per case (a size, or a sweep choice forced through the plugin) eager all-reduces,
 * graph capture, exact check -> warm-up -> timed replays (interleaved rounds in a sweep)
 * -> teardown. Launch modes (launch.h) decide which ranks a process drives and how the
 * NCCL id travels; this module does not know about processes or MPI. */
#ifndef NCCLTUNE_PROBE_MEASURE_H
#define NCCLTUNE_PROBE_MEASURE_H

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "nccllog.h"
#include "options.h"
#include "probe.h"
#include "sweep.h"

/* What the headers the probe is built against offer (measure_server.c); what
 * --capabilities lists depends on it. */
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12000
#define MEASURE_HAVE_COMPUTE 1      /* cudaLibraryLoadData: the PTX compute kernel */
#else
#define MEASURE_HAVE_COMPUTE 0
#endif
#if defined(NCCL_WIN_COLL_SYMMETRIC)
#define MEASURE_HAVE_WINDOW 1       /* ncclCommWindowRegister, NCCL 2.27+ */
#else
#define MEASURE_HAVE_WINDOW 0
#endif

/* The protocol extensions this build implements: options.h's, and "compute" and
 * "window" where the headers have them. */
#define MEASURE_CAPABILITIES (OPTIONS_CAPABILITIES_MASK | \
	(MEASURE_HAVE_COMPUTE ? PROTO_CAP_COMPUTE : 0) | (MEASURE_HAVE_WINDOW ? PROTO_CAP_WINDOW : 0))

/* Called at the start of every step and whenever a long step makes progress, from the
 * measuring thread, with the case being worked on or waited for (-1: none): launch
 * modes use it to feed their watchdog and tell a parent process where a rank is. */
typedef void (*measure_step_fn)(void *arg, enum probe_step step, int case_idx);

struct measure_setup {
	const struct probe_config *cfg;
	int nranks;              /* ranks in the communicator */
	int nlocal;              /* ranks this process drives: 1, or all of them (--launch all) */
	const int *ranks;        /* nlocal global ranks */
	const int *devices;      /* nlocal CUDA device ordinals */
	ncclUniqueId id;
	measure_step_fn on_step; /* may be NULL */
	void *arg;
	const struct sweep_plugin *plugin;  /* the control interface; needed for a sweep */
	struct nccllog_reader *log;         /* this process's NCCL log; NULL: no decisions */
};

/* Number of visible CUDA devices. Returns 0, or -1 with an init failure in `out` that
 * says plainly that no GPU is usable ("no CUDA device visible: cudaGetDeviceCount: ..."). */
int measure_device_count(int *count, struct probe_outcome *out);

/* A fresh NCCL unique id. Returns 0, or -1 with an init failure in `out`. */
int measure_unique_id(ncclUniqueId *id, struct probe_outcome *out);

/* Run the whole measurement for s->nlocal ranks. out[0..nlocal) must be cleared
 * (probe_outcome_clear) and are filled: phase times always, the per-case verdicts
 * (cases, with rank 0's decisions) as far as the run got, timings when ok. On failure
 * the first error is in out[0] and in_flight says which case was being worked on. Every path releases the graphs, events,
 * streams and buffers it made, and the communicators: finalized and destroyed on
 * success, aborted on failure; except that with s->cfg->teardown FAST a successful
 * run leaves its communicators (and NCCL's threads) alive, and the caller must then
 * end the process with _exit once it has reported: never return from main or call
 * exit(), which would run NCCL's static destructors under its own running threads.
 * Process exit releases the CUDA context and with it all GPU memory. Returns 0 when
 * every local rank measured and verified, -1 otherwise. */
int measure_run(const struct measure_setup *s, struct probe_outcome *out);

#endif
