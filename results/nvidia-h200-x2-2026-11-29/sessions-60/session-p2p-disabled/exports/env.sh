# NCCL settings tuned by nccltune 0.1.0 on 2026-11-29T17:16:17Z
# machine: 2 x NVIDIA H200, driver 580.159.04, CUDA 13.0, NCCL 2.28.3, host vm
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 1.69 ms/step, tuned 1.48 ms/step: 1.14x faster (95% CI 1.08-1.20x)
# source: measured
# Source it before starting the program: . ./env.sh
export NCCL_ALGO='Ring'
export NCCL_MIN_NCHANNELS='32'
export NCCL_MAX_NCHANNELS='32'
export NCCL_BUFFSIZE='8388608'
export NCCL_NTHREADS='128'
