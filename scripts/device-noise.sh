#!/bin/bash
# device-noise.sh - how much one probe run varies on a multi-GPU machine, and the MPI
# launch with several ranks; one command on a multi-GPU device kind, writing into $OUT.
#
#   1. Per-run noise: ROUNDS interleaved rounds (A, B, A, B, ...) of two configurations,
#      NCCL's defaults (A) and the tuned best of the 2x H200 sessions (B: MIN=MAX
#      channels 32, 64 KiB buffers, 128 threads), each round one probe process per GPU
#      with the seed's workload (122 x 43,008 B bf16), once over NVLink and once with
#      NCCL_P2P_DISABLE=1 (through host memory, the path nearest a PCIe box without P2P).
#      Every report goes to $OUT/noise.jsonl as {"variant", "config", "round", "report"}.
#   2. MPI with one rank per GPU: mpirun -np NGPU nccltune-probe, in and out of place,
#      and a short tuning session whose probe command is that mpirun line.
# Run from the repository root with .carry/probe carried (scripts/device-build.sh).
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0); nothing changes GPU settings.
#   usage: scripts/device-noise.sh [ROUNDS]   (default 20)
set -u
export NCCL_NVLS_ENABLE=0
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
rounds=${1:-20}
out=${OUT:-$root/.carry/out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.carry/probe/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=$root/.carry/probe/bin
P=$bin/nccltune-probe
if ldd "$P" | grep -q "not found"; then
	P=$bin/nccltune-probe-nompi
fi
ngpu=$(nvidia-smi -L | wc -l)
log=$out/noise-log.txt
: >"$out/noise.jsonl"
{
	echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $ngpu GPU(s), $rounds rounds, probe $P"
	nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv
} >"$log" 2>&1

# one_run VARIANT CONFIG ROUND [VAR=VALUE ...]: one probe run, its report appended.
one_run() {
	local variant=$1 config=$2 round=$3 rep
	shift 3
	rep=$(env "$@" "$P" --bytes 43008 --ops 122 2>>"$log")
	printf '{"variant":"%s","config":"%s","round":%d,"report":%s}\n' "$variant" "$config" \
		"$round" "${rep:-null}" >>"$out/noise.jsonl"
}

for variant in nvlink p2p-disabled; do
	extra=()
	[ "$variant" = p2p-disabled ] && extra=(NCCL_P2P_DISABLE=1)
	for r in $(seq 1 "$rounds"); do
		one_run "$variant" defaults "$r" "${extra[@]}"
		one_run "$variant" tuned "$r" "${extra[@]}" NCCL_MIN_NCHANNELS=32 \
			NCCL_MAX_NCHANNELS=32 NCCL_BUFFSIZE=65536 NCCL_NTHREADS=128
	done
	echo "$variant: $rounds rounds done $(date -u +%H:%M:%S)" >>"$log"
done

# MPI: one rank per GPU (the probe detects mpirun's variables).
if command -v mpirun >/dev/null && [ "$P" = "$bin/nccltune-probe" ]; then
	for flag in "" --out-of-place; do
		echo "== mpirun -np $ngpu nccltune-probe --bytes 43008 --ops 122 $flag" >>"$out/mpi.txt"
		mpirun --allow-run-as-root -np "$ngpu" -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH \
			"$P" --bytes 43008 --ops 122 $flag >>"$out/mpi.txt" 2>&1
		echo "exit $?" >>"$out/mpi.txt"
	done
	"$bin/nccltune" run --out /tmp/sessions/mpi-session --budget 12 --seed 1 \
		--probe "mpirun --allow-run-as-root -np $ngpu -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH $P" \
		>>"$out/mpi.txt" 2>&1
	echo "session exit $?" >>"$out/mpi.txt"
	tar -C /tmp/sessions -czf "$out/mpi-session.tar.gz" mpi-session
else
	echo "no mpirun, or the probe was built without MPI: MPI not run" >>"$out/mpi.txt"
fi
tail -5 "$log"
tail -30 "$out/mpi.txt"
