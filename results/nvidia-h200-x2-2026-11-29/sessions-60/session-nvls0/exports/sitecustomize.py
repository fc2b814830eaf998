# >>> nccltune >>>
# NCCL settings tuned by nccltune 0.1.0 on 2026-11-29T17:14:40Z
# machine: 2 x NVIDIA H200, driver 580.159.04, CUDA 13.0, NCCL 2.28.3, host vm
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 894.8 us/step, tuned 773.8 us/step: 1.16x faster (95% CI 1.12-1.19x)
# source: measured
# Sets each variable unless the environment already has it (yours wins).
import os as _os
for _k, _v in [("NCCL_PROTO", "LL"), ("NCCL_MIN_NCHANNELS", "1"), ("NCCL_MAX_NCHANNELS", "31"), ("NCCL_BUFFSIZE", "16777216"), ("NCCL_NTHREADS", "128")]:
    if _k not in _os.environ: _os.environ[_k] = _v
# <<< nccltune <<<
