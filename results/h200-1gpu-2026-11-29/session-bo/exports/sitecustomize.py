# >>> nccltune >>>
# NCCL settings tuned by nccltune 0.1.0 on 2026-11-29T12:16:53Z
# machine: 1 x NVIDIA H200, driver 580.159.04, CUDA 13.0, NCCL 2.28.3, host vm
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 1.6 us/step, tuned 1.6 us/step: 1.00x (no gain)
# source: measured
# NCCL's defaults were the best configuration found: nothing to set.
# <<< nccltune <<<
