# NCCL settings from an nccltune session (nccltune export); details below
# tuned by nccltune 0.1.0 on 2026-11-29T12:10:00Z
# machine: 1 x <script>alert(1)</script> "GPU" `id` $(id) + 1 x https://evil.example/x.css, driver 580"; os.system('id') #, NCCL $(id)`id`, host box'; rm -rf / #
# workload: 122 x 43008 B all-reduce bf16 per step
# result: baseline 24.40 ms/step, tuned 2.85 ms/step: 8.56x faster
# source: measured
# Source it before starting the program: . ./env.sh (sh, bash, dash, zsh)
export NCCL_ALGO='ring;allreduce:^tree'
export NCCL_PROTO='LL'
# pinned: set when the session ran (it measured with them)
export NCCL_SOCKET_IFNAME='=eth0,^docker'
