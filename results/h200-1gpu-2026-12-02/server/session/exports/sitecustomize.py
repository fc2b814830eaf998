# >>> nccltune >>>
# NCCL settings from an nccltune session (nccltune export); details below
# tuned by nccltune 0.1.0 on 2026-12-02T08:14:01Z
# machine: 1 x NVIDIA H200, driver 580.159.04, CUDA 13.0, NCCL 2.28.9 (/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2), host vm
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 1.8 us/step, tuned 1.3 us/step (measured once): not measured enough to recommend; run with --budget 20 or more
# source: measured
# set by the server (sglang): NCCL_CUMEM_ENABLE=0
# set by the server (sglang): CUDA_DEVICE_MAX_CONNECTIONS=8
# Nothing to set: not measured enough to recommend; run with --budget 20 or more.
# The best was not re-measured against NCCL's defaults in two interleaved
# rounds, so no gain is shown and nothing is recommended.
# <<< nccltune <<<
