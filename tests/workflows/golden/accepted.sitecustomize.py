# >>> nccltune >>>
# NCCL settings from an nccltune session (nccltune export); details below
# tuned by nccltune 0.1.0 on 2026-11-29T12:10:00Z
# machine: 1 x <script>alert(1)</script> "GPU" `id` $(id) + 1 x https://evil.example/x.css, driver 580"; os.system('id') #, NCCL $(id)`id`, host box'; rm -rf / #
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 24.40 ms/step, tuned 2.85 ms/step: 8.56x faster
# source: measured
# Sets each variable unless the environment already has it (yours wins);
# with NCCLTUNE_OFF=1 in the environment it sets nothing.
import os as _os
if _os.environ.get("NCCLTUNE_OFF") != "1":
    for _k, _v in (
        ("NCCL_ALGO", "ring;allreduce:^tree"),
        ("NCCL_PROTO", "LL"),
        # pinned: set when the session ran (it measured with them)
        ("NCCL_SOCKET_IFNAME", "=eth0,^docker"),
    ):
        if _k not in _os.environ:
            _os.environ[_k] = _v
# <<< nccltune <<<
