#!/bin/bash
# device-sweep-cost.sh - issue 17, "probe cost per inner choice on one H200": N choices in
# one sweeping nccltune-probe process against N fresh processes (one configuration each,
# deployed through nccltune's plugin and a one-rule table), side by side, interleaved over R
# repeats (bench/sweep_cost.py): outside wall time and the probe's own phases_s. With one GPU
# (nranks 1) this measures the mechanics only: init, eager, capture, instantiate, replay,
# verify; NCCL consults no tuner at one rank. Writes $OUT/sweep-cost/{cost-N.json,cost-N.txt,
# run.log}.
#
# Build first, here: scripts/device-build.sh; then call the device tool with
#   command: scripts/device-sweep-cost.sh [REPEATS] [N...]   carry: [".carry/probe"]
# (default: 3 repeats, N = 24 and 96). NCCL_NVLS_ENABLE=0; no GPU setting changes.
set -u
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
# the carried build: root, P (the probe, without MPI where libmpi is missing), PLUGIN, ngpu
. "$(dirname "$0")/device-lib.sh"
repeats=${1:-3}
[ $# -gt 0 ] && shift
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(24 96)
out=${OUT:-$root/.carry/out}/sweep-cost
mkdir -p "$out"
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	"$P" --version
	echo "GPUs: $ngpu (measuring with --gpus 1: nranks 1, mechanics only)"
} | tee "$out/run.log"
rc=0
for n in "${counts[@]}"; do
	python3 bench/sweep_cost.py --probe "$P" --plugin "$PLUGIN" --bytes 43008 --ops 122 \
		--choices "$n" --repeats "$repeats" --iters 200 --rounds 5 --label "measured, 1 H200, nranks 1" \
		--probe-arg=--gpus --probe-arg=1 --probe-arg=--launch --probe-arg=process \
		--work "$out/work-$n" --json "$out/cost-$n.json" >"$out/cost-$n.txt" 2>>"$out/run.log"
	r=$?
	[ $r -ne 0 ] && rc=$r
	echo "N=$n: sweep_cost.py exit $r"
	cat "$out/cost-$n.txt"
done
tail -5 "$out/run.log"
exit $rc
