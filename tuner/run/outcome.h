/* outcome.h - what one probe run came to: a measurement or a failure class. Produced by
 * the runner, recorded by the journal, learned from by prune and the strategies. */
#ifndef NCCLTUNE_OUTCOME_H
#define NCCLTUNE_OUTCOME_H

#include <stdbool.h>
#include "proto.h"

enum outcome_class {
	OUTCOME_OK,
	/* the probe said where it failed */
	OUTCOME_ARGS, OUTCOME_ENV, OUTCOME_INIT, OUTCOME_CAPTURE, OUTCOME_REPLAY, OUTCOME_VERIFY,
	/* inferred by the runner */
	OUTCOME_CRASH,    /* killed by a signal */
	OUTCOME_TIMEOUT,  /* overran its deadline; the runner killed the group */
	OUTCOME_GARBAGE,  /* no parsable report, or one that breaks the schema */
	OUTCOME_SPAWN,    /* the probe command could not be started at all */
	OUTCOME_COUNT_
};

struct outcome {
	enum outcome_class cls;
	double objective_us;       /* workload time per step; NAN unless cls == OUTCOME_OK */
	int exit_status;           /* -1 when killed by a signal */
	int signal;                /* 0 unless killed by a signal */
	double wall_s;             /* wall time of the run */
	char error[PROTO_ERROR_MAX];   /* the probe's error, or the runner's reason */
	char stderr_tail[2048];    /* last lines of the probe's stderr */
	struct proto_report report;    /* valid when the report parsed (ok or failure) */
};

/* "ok", "args", ..., "crash", "timeout", "garbage", "spawn". */
const char *outcome_class_name(enum outcome_class c);
/* Parse a class name; returns 0 or -1. */
int outcome_class_parse(const char *s, enum outcome_class *out);
/* A failure worth retrying once to tell a flake from a rule (crash, timeout, garbage). */
bool outcome_class_flaky(enum outcome_class c);
/* The class of a failure the probe reported at `stage` (OUTCOME_GARBAGE for a stage
 * outside the protocol). Can't fail. */
enum outcome_class outcome_class_of_stage(enum proto_stage stage);
/* Did a run fail at init for a reason no NCCL variable can change: no GPU visible, a
 * driver or CUDA that cannot serve one, MPI that cannot start (decided from the
 * probe's message: "no CUDA-capable device", "CUDA driver version is insufficient",
 * "no usable GPU", ...)? Can't fail. */
bool outcome_machine_unusable(enum outcome_class c, const char *error);
/* A human phrase for summaries: "failed at graph capture", "crashed", "hung". */
const char *outcome_class_phrase(enum outcome_class c);

#endif
