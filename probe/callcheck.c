/* callcheck.c - turning CUDA and NCCL errors into probe failures (see callcheck.h). */
#include "callcheck.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* "ncclAllReduce(a, b, ...)" -> length of "ncclAllReduce". */
static int call_name_len(const char *call)
{
	return (int)strcspn(call, "(");
}

/* The file name without the source root, so messages do not depend on where the tree
 * was built. */
static const char *short_file(const char *file)
{
	const char *p = strstr(file, "probe/");

	return p ? p : file;
}

static void record(struct probe_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void record(struct probe_check *c, const char *fmt, ...)
{
	char msg[PROTO_ERROR_MAX];
	va_list ap;

	if (!c->out->ok && c->out->error[0])
		return;  /* keep the first failure: later ones are usually its consequences */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (c->what[0])
		probe_outcome_fail(c->out, probe_step_stage(c->step), "%s: %s", c->what, msg);
	else
		probe_outcome_fail(c->out, probe_step_stage(c->step), "%s: %s",
		                   probe_step_name(c->step), msg);
}

void check_cuda_failed(struct probe_check *c, const char *call, cudaError_t err,
                       const char *file, int line)
{
	record(c, "%.*s: %s (%s) [%s:%d]", call_name_len(call), call, cudaGetErrorString(err),
	       cudaGetErrorName(err), short_file(file), line);
}

void check_failf(struct probe_check *c, const char *fmt, ...)
{
	char msg[PROTO_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	record(c, "%s", msg);
}

int check_nccl_result(struct probe_check *c, ncclComm_t comm, ncclResult_t res,
                      const char *call, const char *file, int line)
{
	const char *last;

	while (res == ncclInProgress && comm) {
		struct timespec pause = {0, 100 * 1000};

		if (probe_now() > c->deadline) {
			record(c, "%.*s still in progress after the step timeout [%s:%d]",
			       call_name_len(call), call, short_file(file), line);
			return -1;
		}
		nanosleep(&pause, NULL);
		if (ncclCommGetAsyncError(comm, &res) != ncclSuccess) {
			record(c, "ncclCommGetAsyncError failed while waiting for %.*s [%s:%d]",
			       call_name_len(call), call, short_file(file), line);
			return -1;
		}
	}
	if (res == ncclSuccess || res == ncclInProgress)
		return 0;
	last = ncclGetLastError(comm);
	record(c, "%.*s: %s%s%s [%s:%d]", call_name_len(call), call, ncclGetErrorString(res),
	       last && *last ? ": " : "", last ? last : "", short_file(file), line);
	return -1;
}
