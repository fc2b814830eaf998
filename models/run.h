/* run.h - one run of nccltune-model-probe: the model's NCCL in one process (its tuner
 * plugin loaded as NCCL loads it, asked per size), evaluated and turned into the probe's
 * report. Internal to the model probe. */
#ifndef NCCLTUNE_MODEL_RUN_H
#define NCCLTUNE_MODEL_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "model.h"
#include "sweep.h"
#include "tuner.h"

/* What a run is given. */
struct model_run {
	const struct model *m;
	const struct model_env *env;
	const struct proto_workload *w;
	const char *tuner_plugin;        /* NCCL_TUNER_PLUGIN of the run, NULL when unset */
	struct model_tuner_cache *tuners;/* the process's loaded plugins */
	double noise;                    /* noise scale */
	gsl_rng *rng;                    /* seeded; NULL with noise 0 */
	bool explain;                    /* NCCL's choices to stderr */
	int corrupt_rank;                /* --test-corrupt-rank, -1 */
	bool cumem_off;                  /* NCCL_CUMEM_ENABLE is 0 (--window needs cuMem) */
	/* a sweep (model_run_sweep) */
	const struct sweep_plan *sweep;
	const struct sweep_plugin *control;  /* nccltune's plugin, held for the run */
	int corrupt_choice;              /* --test-corrupt-choice, -1 */
	int stall_choice;                /* --test-stall-choice, -1 */
};

/* A plain run (one case per size): the model's NCCL, its tuner asked for each size, the
 * evaluation and its report with noise. Never fails: every problem becomes a failure
 * report (clear it with proto_report_clear). */
void model_run_plain(const struct model_run *run, struct proto_report *out);

/* A sweep (docs/probe-protocol.md "Sweep"), as nccltune-probe runs one in a process: the
 * sizes' own cases (results) and the file's choices, each forced through nccltune's
 * plugin (run->control) and asked through NCCL's side of it (run->tuner_plugin: the same
 * file, so the same control state); a choice the plugin records IGNORE is "not
 * available", one the model says sums wrong is that choice's verify failure, one whose
 * capture the model fails fails the run with it in flight, one the model says hangs
 * (a failure rule at stage replay, or --test-stall-choice) fails the run at its first
 * timed replay, with it in flight and the entries final so far. Replays follow the
 * file's seeded interleaved rounds (common/sweep.c), one noise offset for the process
 * and per-sample noise. Never fails: problems become failure reports. */
void model_run_sweep(const struct model_run *run, struct proto_report *out);

/* The decisions a tuner makes NCCL take for every size of w (force[i]); false when the
 * run must fail (the failure is in *fail). With no tuner, every force is NCCL's own.
 * ctx is the tuner context model_tuner_init gave (or NULL). */
bool model_run_ask(const struct model_run *run, struct model_tuner *t, void *ctx,
                   const struct proto_workload *w, int reg_buff, struct model_force *force,
                   struct model_eval_result *fail);

/* ---- shared by run.c and run_sweep.c ---- */

/* Set r to a failure at `stage` with a printf-style message. */
void model_run_fail(struct model_eval_result *r, enum proto_stage stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The tuner of this run, loaded (once per process, run->tuners) and initialised for the
 * run's communicator: *t NULL when there is none (a plugin that does not load: a warning
 * on stderr, NCCL runs without, as NCCL does). Returns false, with the failure in *fail,
 * when the plugin's init fails the communicator. */
bool model_run_tuner_start(const struct model_run *run, struct model_tuner **t, void **ctx,
                           struct model_eval_result *fail);

/* finalize the context (a warning when the plugin complains). Accepts t NULL. */
void model_run_tuner_end(struct model_tuner *t, void *ctx);

/* --explain lines: the model and its tuner; one evaluated case ("43008 B"). */
void model_run_explain_head(const struct model_run *run, const struct model_tuner *t);
void model_run_explain_choice(const char *what, const struct model_choice *c, double us);

#endif
