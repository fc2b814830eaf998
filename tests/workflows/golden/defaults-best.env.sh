# NCCL settings from an nccltune session (nccltune export); details below
# tuned by nccltune 0.1.0 on 2026-11-29T15:00:00Z
# machine: 8 x NVIDIA RTX PRO 6000 Blackwell Server Edition, driver 580.159.04, CUDA 13.0, NCCL 2.28.9, host fixture-box
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 2.40 ms/step, tuned 2.40 ms/step: 1.00x (no gain)
# source: measured
# NCCL's defaults were the best configuration found: nothing to set.
