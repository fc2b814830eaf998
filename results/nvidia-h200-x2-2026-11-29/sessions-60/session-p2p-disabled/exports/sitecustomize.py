# >>> nccltune >>>
# NCCL settings tuned by nccltune 0.1.0 on 2026-11-29T17:16:17Z
# machine: 2 x NVIDIA H200, driver 580.159.04, CUDA 13.0, NCCL 2.28.3, host vm
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 1.69 ms/step, tuned 1.48 ms/step: 1.14x faster (95% CI 1.08-1.20x)
# source: measured
# Sets each variable unless the environment already has it (yours wins).
import os as _os
for _k, _v in [("NCCL_ALGO", "Ring"), ("NCCL_MIN_NCHANNELS", "32"), ("NCCL_MAX_NCHANNELS", "32"), ("NCCL_BUFFSIZE", "8388608"), ("NCCL_NTHREADS", "128")]:
    if _k not in _os.environ: _os.environ[_k] = _v
# <<< nccltune <<<
