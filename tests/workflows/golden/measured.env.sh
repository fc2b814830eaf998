# NCCL settings from an nccltune session (nccltune export); details below
# tuned by nccltune 0.1.0 on 2026-11-29T12:10:00Z
# machine: 8 x NVIDIA RTX PRO 6000 Blackwell Server Edition, driver 580.159.04, CUDA 13.0, NCCL 2.28.9, host fixture-box
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 24.40 ms/step, tuned 2.85 ms/step: 8.56x faster (95% CI 8.30-8.80x)
# source: measured
# Source it before starting the program: . ./env.sh (sh, bash, dash, zsh)
export NCCL_PROTO='LL'
export NCCL_ALGO='Ring'
export NCCL_MAX_NCHANNELS='2'
export NCCL_BUFFSIZE='131072'
export NCCL_NTHREADS='64'
# pinned: set when the session ran (it measured with them)
export NCCL_P2P_LEVEL='SYS'
