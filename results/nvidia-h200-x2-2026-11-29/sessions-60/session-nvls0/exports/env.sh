# NCCL settings tuned by nccltune 0.1.0 on 2026-11-29T17:14:40Z
# machine: 2 x NVIDIA H200, driver 580.159.04, CUDA 13.0, NCCL 2.28.3, host vm
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 894.8 us/step, tuned 773.8 us/step: 1.16x faster (95% CI 1.12-1.19x)
# source: measured
# Source it before starting the program: . ./env.sh
export NCCL_PROTO='LL'
export NCCL_MIN_NCHANNELS='1'
export NCCL_MAX_NCHANNELS='31'
export NCCL_BUFFSIZE='16777216'
export NCCL_NTHREADS='128'
