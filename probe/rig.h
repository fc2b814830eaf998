/* rig.h - several ranks of one communicator on one GPU (--ranks-per-gpu, NCCL 2.30's
 * NCCL_MULTI_RANK_GPU_ENABLE): which GPU a rank uses, whether the NCCL at hand can do
 * it, the variable NCCL needs, and whether processes that share a GPU have the MPS
 * daemon. A test rig: real NCCL mechanics on one GPU's SMs and memory, not a multi-GPU
 * machine. No CUDA or NCCL calls here (the caller passes ncclGetVersion's code), so it
 * is tested anywhere. */
#ifndef NCCLTUNE_PROBE_RIG_H
#define NCCLTUNE_PROBE_RIG_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

/* The first NCCL with NCCL_MULTI_RANK_GPU_ENABLE (2.30.0, as ncclGetVersion codes it). */
#define RIG_MIN_NCCL_VERSION 23000
#define RIG_ENV "NCCL_MULTI_RANK_GPU_ENABLE"

/* The CUDA device of global rank `rank` when `ranks_per_gpu` ranks share each GPU:
 * rank / ranks_per_gpu (ranks in a row share one). Can't fail (ranks_per_gpu >= 1). */
int rig_device(int rank, int ranks_per_gpu);

/* Whether ranks_per_gpu ranks per GPU can run here: always for 1; for more, NCCL
 * `nccl_version` (ncclGetVersion's code) must be 2.30 or newer, and `env_value` (RIG_ENV's
 * value, NULL when unset) must not be an integer 0 as NCCL reads it (strtoll base 0).
 * Returns 0, or -1 with a message for stage env naming the option, the version or the
 * variable. */
int rig_check(int ranks_per_gpu, int nccl_version, const char *env_value, char *err,
              size_t errlen);

/* For ranks_per_gpu > 1: set RIG_ENV=1 unless it is set (rig_check accepted its value),
 * and note it in rep (the report's "probe_env"). Before any NCCL call that may start a
 * thread. Returns 0, or -1 with err naming setenv's error. */
int rig_enable(int ranks_per_gpu, struct reporter *rep, char *err, size_t errlen);

/* Whether the CUDA MPS control daemon serves pipe folder `dir`, with `proc` the /proc to
 * look into: its control entry "control" (a named pipe, or a UNIX socket in newer
 * drivers) exists in dir, and `proc` does not show that no process named
 * nvidia-cuda-mps-control (or -server; comm cut at 15 bytes) runs; or, with no such
 * entry, `proc` shows such a process. A `proc` that can't be read leaves the entry alone
 * to decide. Only lstat and reads; can't fail. */
bool rig_mps_seen(const char *dir, const char *proc);

/* rig_mps_seen for CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps) and /proc; `where`
 * receives the pipe folder looked at. Can't fail. */
bool rig_mps_running(char *where, size_t wherelen);

/* The warning of a run where `procs` processes share each GPU without MPS (they
 * time-slice it), into buf. Can't fail. */
void rig_no_mps_warning(int procs, const char *where, char *buf, size_t len);

#endif
