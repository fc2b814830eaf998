/* retune.h - the unattended re-tune (retune.c): everything but running the session, which
 * belongs to the later stage tuner/session/ and is handed in as a function (the session
 * stage defines nccltune_retune, session/retune.c, and passes its runner). */
#ifndef NCCLTUNE_WORKFLOWS_RETUNE_H
#define NCCLTUNE_WORKFLOWS_RETUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "nccltune.h"

/* One re-tuning session, from the recorded settings of the session it re-tunes. */
struct retune_job {
	const char *probe;           /* the recorded probe, quoted for a shell-like split */
	const char *space_file;      /* the recorded space, written into out_dir */
	const char *workload_file;   /* the recorded workload (with iters, warmup) */
	const char *warm_from;       /* the session in use */
	const char *out_dir;         /* STATE_DIR/sessions/<time> */
	const char *strategy;        /* NULL: the default */
	long budget;                 /* <= 0: the default */
	bool has_seed;
	unsigned long seed;
	double time_limit_s;         /* 0: none */
	double timeout_s;            /* 0: derived from the baseline */
	FILE *progress;
};

/* Run the job's session; an nccltune_status, the session's message in err. */
typedef int (*retune_tune_fn)(const struct retune_job *job, char *err, size_t errlen);

/* nccltune_retune with the session runner `tune` (contract in nccltune.h). */
int retune_run(const char *state_dir, const struct nccltune_retune_options *o,
               retune_tune_fn tune, FILE *out, char *err, size_t errlen);

#endif
