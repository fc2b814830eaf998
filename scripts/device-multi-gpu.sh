#!/bin/bash
# device-multi-gpu.sh - the real multi-GPU tuning run (issue #8), one command on a
# multi-GPU device kind (nvidia-h200-x2/-x4/-x8), writing into $OUT:
#   1. the seed's workload (122 x 43,008 B bf16), default space + NCCL_NVLS_ENABLE=0
#      fixed, bo, one process per GPU, with the seed's hand config measured in the same
#      session (--try) so baseline, tuned best and hand config share one final A/B round;
#   2. the same with NCCL_P2P_DISABLE=1 fixed (traffic through host memory, nearer to a
#      PCIe-only box than NVLink is).
# Build first, here: scripts/device-build.sh; then call the device tool with
#   command: scripts/device-multi-gpu.sh [BUDGET]   carry: [".carry/probe"]
# NVLink multicast stays off: NCCL_NVLS_ENABLE=0 in the environment and fixed in both
# spaces; nothing here calls cuMulticastCreate or changes GPU settings.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
budget=${1:-40}
kind=$(nvidia-smi -L | wc -l)x-h200
spaces=/tmp/nccltune-spaces
mkdir -p "$spaces"
# The default space with multicast pinned off, and a variant through host memory.
for variant in nvls0 p2p-disabled; do
	extra=""
	[ "$variant" = p2p-disabled ] && extra=', "NCCL_P2P_DISABLE": "1"'
	cat >"$spaces/$variant.json" <<JSON
{"schema": "nccltune-space/1",
 "params": {
   "NCCL_PROTO": {"values": ["LL", "LL128", "Simple", null]},
   "NCCL_ALGO": {"values": ["Ring", "Tree", null]},
   "NCCL_MIN_NCHANNELS": {"int": [1, 32]},
   "NCCL_MAX_NCHANNELS": {"int": [1, 32]},
   "NCCL_BUFFSIZE": {"pow2": [65536, 16777216]},
   "NCCL_NTHREADS": {"values": [64, 128, 256, 512, null]}},
 "fixed": {"NCCL_NVLS_ENABLE": "0"$extra},
 "constraints": ["NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS"]}
JSON
done
# The environment already pins NCCL_NVLS_ENABLE=0 (the space fixes the same value).
hand="NCCL_PROTO=LL NCCL_ALGO=Ring NCCL_P2P_LEVEL=SYS NCCL_MAX_NCHANNELS=2 NCCL_BUFFSIZE=131072 NCCL_NTHREADS=64"
nvidia-smi topo -m >"${OUT:-/tmp}/topology-$kind.txt" 2>&1
for variant in nvls0 p2p-disabled; do
	scripts/device-session.sh "$kind-$variant" --space "$spaces/$variant.json" \
		--workload examples/kimi-k25-eagle3-verify-8xpcie.json --budget "$budget" --seed 1 \
		--try "$hand"
done
