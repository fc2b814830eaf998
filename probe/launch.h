/* launch.h - the three ways the probe starts its ranks, all over the same measurement
 * (measure.h):
 *   process (default): this process forks one child per GPU; rank 0's child makes the
 *     NCCL id, the parent relays it over pipes, gathers every rank's timings over the
 *     same pipes, and reports the slowest rank per replay;
 *   all: one process drives every GPU (communicators created in one NCCL group);
 *   mpi: started by mpirun/srun, one rank per process; the id travels by MPI_Bcast,
 *     rank 0 gathers and reports.
 * Each returns the process exit status after the report has been written. */
#ifndef NCCLTUNE_PROBE_LAUNCH_H
#define NCCLTUNE_PROBE_LAUNCH_H

#include "nccllog.h"
#include "probe.h"
#include "report.h"
#include "sweep.h"

/* The mode `cfg->launch` resolves to in this environment: AUTO becomes MPI when a
 * launcher's variables are set (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK,
 * SLURM_STEP_NUM_TASKS), else PROCESS. `why` (may be NULL) receives the variable that
 * decided. Can't fail. */
enum probe_launch launch_resolve(const struct probe_config *cfg, char *why, size_t whylen);

/* plugin: the control interface the caller opened for a sweep (children of the process
 * mode inherit it), NULL for a plain run. */
int launch_process(const struct probe_config *cfg, const struct sweep_plugin *plugin,
                   struct reporter *rep);
int launch_all(const struct probe_config *cfg, const struct sweep_plugin *plugin,
               struct reporter *rep);

/* Defined only when built with MPI (PROBE_HAVE_MPI). Every rank opens the plugin itself
 * after MPI_Init, where rank 0 can report a refusal. */
int launch_mpi(const struct probe_config *cfg, struct reporter *rep);

/* nccllog_setup, with a note on stderr when it fails (the run goes on without
 * decisions). Call before any NCCL call, and in the per-process mode before forking. */
void launch_log_start(struct nccllog *log);

/* Grace the watchdog adds to --step-timeout before it ends a stuck process. */
double launch_grace_s(const struct probe_config *cfg);

#endif
