# >>> nccltune >>>
# NCCL settings from an nccltune session (nccltune export); details below
# tuned by nccltune 0.1.0 on 2026-11-29T13:00:00Z
# machine: 8 x NVIDIA RTX PRO 6000 Blackwell Server Edition, driver 580.159.04, CUDA 13.0, NCCL 2.28.9, host fixture-model [model pcie-gen5-8gpu]
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 20.10 ms/step, tuned 2.51 ms/step: 8.00x faster (95% CI 7.90-8.10x)
# source: model (pcie-gen5-8gpu) - not a measurement
# A machine model's numbers are no reason to set anything in production:
# on the real machine run nccltune run (no --model) with the same workload,
# then export or install that session (export --install refuses a model).
# Sets each variable unless the environment already has it (yours wins);
# with NCCLTUNE_OFF=1 in the environment it sets nothing.
import os as _os
if _os.environ.get("NCCLTUNE_OFF") != "1":
    for _k, _v in (
        ("NCCL_PROTO", "LL"),
        ("NCCL_MAX_NCHANNELS", "7"),
    ):
        if _k not in _os.environ:
            _os.environ[_k] = _v
# <<< nccltune <<<
