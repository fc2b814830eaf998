# >>> nccltune >>>
# NCCL settings from an nccltune session (nccltune export); details below
# tuned by nccltune 0.1.0 on 2026-11-29T12:10:00Z
# machine: 8 x NVIDIA RTX PRO 6000 Blackwell Server Edition, driver 580.159.04, CUDA 13.0, NCCL 2.28.9, host fixture-box
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 24.40 ms/step, tuned 2.85 ms/step: 8.56x faster (95% CI 8.30-8.80x)
# source: measured
# Sets each variable unless the environment already has it (yours wins);
# with NCCLTUNE_OFF=1 in the environment it sets nothing.
import os as _os
if _os.environ.get("NCCLTUNE_OFF") != "1":
    for _k, _v in (
        ("NCCL_PROTO", "LL"),
        ("NCCL_ALGO", "Ring"),
        ("NCCL_MAX_NCHANNELS", "2"),
        ("NCCL_BUFFSIZE", "131072"),
        ("NCCL_NTHREADS", "64"),
        # pinned: set when the session ran (it measured with them)
        ("NCCL_P2P_LEVEL", "SYS"),
    ):
        if _k not in _os.environ:
            _os.environ[_k] = _v
# <<< nccltune <<<
