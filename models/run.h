/* run.h - one run of nccltune-model-probe: the model's NCCL in one process (its tuner
 * plugin loaded as NCCL loads it, asked per size), evaluated and turned into the probe's
 * report. Internal to the model probe. */
#ifndef NCCLTUNE_MODEL_RUN_H
#define NCCLTUNE_MODEL_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "model.h"
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
};

/* A plain run (one case per size): the model's NCCL, its tuner asked for each size, the
 * evaluation and its report with noise. Never fails: every problem becomes a failure
 * report (clear it with proto_report_clear). */
void model_run_plain(const struct model_run *run, struct proto_report *out);

/* The decisions a tuner makes NCCL take for every size of w (force[i]); false when the
 * run must fail (the failure is in *fail). With no tuner, every force is NCCL's own.
 * ctx is the tuner context model_tuner_init gave (or NULL). */
bool model_run_ask(const struct model_run *run, struct model_tuner *t, void *ctx,
                   const struct proto_workload *w, int reg_buff, struct model_force *force,
                   struct model_eval_result *fail);

#endif
