/* callcheck.h - CUDACHECK / NCCLCHECK: every CUDA and NCCL call of the probe goes through
 * one of these, so a failure names the call, the file and line, NCCL's own last error
 * text, and the step the probe was in (which gives the protocol stage).
 *
 * Both macros jump to the enclosing function's `out:` label after recording the
 * failure: one cleanup path per function. */
#ifndef NCCLTUNE_PROBE_CALLCHECK_H
#define NCCLTUNE_PROBE_CALLCHECK_H

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "probe.h"

/* Where check failures go and what the probe was doing when they happened. */
struct probe_check {
	struct probe_outcome *out;   /* the failure is recorded here (first one wins) */
	enum probe_step step;        /* current step: gives the stage */
	char what[160];              /* current action, e.g. "capture of 43008 bytes" */
	double deadline;             /* probe_now() after which waits give up */
};

/* Record a failed CUDA call in c->out (unless a failure is already there). */
void check_cuda_failed(struct probe_check *c, const char *call, cudaError_t err,
                       const char *file, int line);

/* Judge a NCCL call's result: ncclSuccess -> 0; ncclInProgress (non-blocking
 * communicator) -> poll ncclCommGetAsyncError(comm) until the call completes or
 * c->deadline passes; anything else -> record the failure (with ncclGetLastError) and
 * return -1. comm may be NULL for calls that have none. */
int check_nccl_result(struct probe_check *c, ncclComm_t comm, ncclResult_t res,
                      const char *call, const char *file, int line);

/* Record a failure of the probe's own making (printf-style) at the current step. */
void check_failf(struct probe_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CUDACHECK(c, call) do { \
	cudaError_t check_e_ = (call); \
	if (check_e_ != cudaSuccess) { \
		check_cuda_failed((c), #call, check_e_, __FILE__, __LINE__); \
		goto out; \
	} \
} while (0)

#define NCCLCHECK(c, comm, call) do { \
	ncclResult_t check_r_ = (call); \
	if (check_nccl_result((c), (comm), check_r_, #call, __FILE__, __LINE__) != 0) \
		goto out; \
} while (0)

#endif
