#!/bin/bash
# device-multi-gpu-equivalence.sh - issue 19 step 2: sweep vs fresh plugin-deployed process
# for the same >= 20 choices (scripts/device-sweep-equivalence.sh, bench/sweep_equivalence.py)
# in --launch process and all, and under MPI when this build and machine have it, over NVLink
# and with NCCL_P2P_DISABLE=1. Writes
# $OUT/results/<kind>-<date>/sweep-equivalence/<mode>-<path>/sweep-equivalence/ (the
# equivalence script's own folder under each run's OUT).
#   command: scripts/device-multi-gpu-equivalence.sh [REPEATS]   carry: [".carry/probe"]
set -u
. "$(dirname "$0")/device-lib.sh"
result_dir sweep-equivalence
repeats=${1:-5}
modes=(process all)
[ "$HAVE_MPI" = 1 ] && modes+=(mpi) || note "mpi: no MPI build or mpirun here (skipped)"
for path in nvlink p2p-disabled; do
	for mode in "${modes[@]}"; do
		if [ $path = p2p-disabled ]; then p2p=1; else p2p=${NCCL_P2P_DISABLE:-}; fi
		OUT=$res/$mode-$path NCCL_P2P_DISABLE=$p2p timeout 590 \
			scripts/device-sweep-equivalence.sh "$repeats" "$mode" >"$res/$mode-$path.txt" 2>&1
		note "$mode, $path: exit $? ($(grep -E '^ranking' "$res/$mode-$path.txt" | head -1))"
	done
done
cat "$res/run.log"
