#!/bin/bash
# rig-plugin.sh - issue 26 step (a): per-size plugin rules on real NCCL at nranks 2 (two
# ranks on the one GPU, NCCL 2.30.7). A table with a rule at 43,008 B (Ring/LL, 2 CTAs,
# nranks 2) and none at 117,440,512 B; the probe runs --bytes 43008,117440512 --ops 122,1
# in the `all` mode (one process, two communicators, no MPS) and under mpirun -np 2 (two
# processes time-slicing the GPU; once more with MPS and NCCL's INFO log for P2P/SHM, as a
# diagnosis), each with and without the plugin, twice: once with
# NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING (NCCL's own lines: the eager all-reduces
# before capture and the captured ones, per size) and once without (the probe's own
# "nccl" decisions, from the captured ops). Then the GPU test tests/probe/test_rig_gpu.py.
# Writes $OUT/results/<gpu>-2ranks-<date>/plugin/: per run .json and .err, summary.txt.
#   build here first: scripts/device-build.sh; the lead copies ../shared/tools/nccl-2.30.7
#   to rig/nccl-2.30.7. Device call: command: scripts/rig-plugin.sh
#   carry: [".carry/probe", "rig"]. Takes about 3-6 minutes (the MPI runs time-slice).
set -u
. "$(dirname "$0")/rig-lib.sh"
rig_result_dir plugin
table=$res/rule-43008.table
printf 'nccltune-tuner/1\nallreduce 2 * 43008 43008 ring ll 2 0\n' >"$table"
# mpi runs without MPS (the two processes time-slice the GPU: slow, ~4.5 ms per op, but it
# ran in device-notes 2026-12-06); mpi-mps once with MPS and NCCL's INFO log, because the
# eager step stalled under MPS in the first rig call (results/h100-2ranks-2026-12-06)
modes=(all)
if [ "$HAVE_MPI" = 1 ]; then modes+=(mpi mpi-mps); else note "mpi: no MPI build or mpirun here (skipped)"; fi
: >"$res/summary.txt"
for mode in "${modes[@]}"; do
	plugs=(plugin none) hows=(tuning decisions)
	if [ "$mode" = mpi-mps ]; then
		mps_start || continue
		plugs=(plugin) hows=(tuning)
	fi
	for plug in "${plugs[@]}"; do
		for how in "${hows[@]}"; do
			name=$mode-$plug-$how
			envs=(NCCL_NVLS_ENABLE=0)
			[ $how = tuning ] && envs+=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING)
			[ "$mode" = mpi-mps ] && envs+=(NCCL_DEBUG_SUBSYS=INIT,TUNING,P2P,SHM,PROXY,TRANSPORT)
			[ $plug = plugin ] && envs+=(NCCL_TUNER_PLUGIN="$PLUGIN" NCCLTUNE_TUNER_TABLE="$table")
			cmd=("$P" --nccl "$LIB230" --bytes 43008,117440512 --ops 122,1 --iters 20 --warmup 2
				--step-timeout 30)
			if [ "$mode" != all ]; then
				# two processes on the GPU: the launcher's ranks share it (the probe sets
				# NCCL_MULTI_RANK_GPU_ENABLE=1 and reports ranks_per_gpu 2 and MPS)
				mpi=(mpirun --allow-run-as-root -np 2 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE)
				[ $how = tuning ] && mpi+=(-x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS)
				[ $plug = plugin ] && mpi+=(-x NCCL_TUNER_PLUGIN -x NCCLTUNE_TUNER_TABLE)
				[ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && mpi+=(-x CUDA_MPS_PIPE_DIRECTORY)
				cmd=("${mpi[@]}" "${cmd[@]}" --launch mpi)
			else
				cmd+=(--ranks-per-gpu 2 --launch all)
			fi
			env "${envs[@]}" timeout 240 "${cmd[@]}" >"$res/$name.json" 2>"$res/$name.err"
			rc=$?
			{
				echo "== $name: exit $rc; report: $(python3 -c 'import json,sys
try: r=json.load(open(sys.argv[1]))
except ValueError: sys.exit("no report on stdout")
print({k: r.get(k) for k in ("ok","nranks","ranks_per_gpu","mps","probe_env","warnings","error")}, [(x["bytes"], x["us"]["median"], x.get("nccl")) for x in r.get("results", [])])' "$res/$name.json" 2>&1)"
				grep -E "TUNER|nccltune|NCCL version" "$res/$name.err" | sed 's/^[^ ]* [^ ]* //' | sort | uniq -c | head -6
				# per size, rank 0 logs the probe's 2 eager all-reduces first, then the
				# captured ones (122 at 43008 B, 1 at 117440512 B)
				for b in 43008 117440512; do
					lines=$(grep -E "Bytes ->" "$res/$name.err" | grep -w "$b" | sed 's/^.*AllReduce/AllReduce/')
					echo "-- $b B, eager (NCCL's lines, count):"
					[ -n "$lines" ] && echo "$lines" | head -2 | sort | uniq -c
					echo "-- $b B, captured:"
					[ -n "$lines" ] && echo "$lines" | tail -n +3 | sort | uniq -c | head -4
				done
			} >>"$res/summary.txt"
		done
	done
	[ "$mode" = mpi-mps ] && mps_stop
done
note "GPU test (tests/probe/test_rig_gpu.py):"
NCCLTUNE_NCCL230=$LIB230 timeout 420 python3 tests/probe/test_rig_gpu.py "$P" "$bin/probe_parse_report" \
	"$PLUGIN" >"$res/test_rig_gpu.txt" 2>&1
note "test_rig_gpu.py: exit $? ($(tail -1 "$res/test_rig_gpu.txt"))"
cat "$res/summary.txt" "$res/run.log"
