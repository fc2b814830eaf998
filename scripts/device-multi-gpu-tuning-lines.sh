#!/bin/bash
# device-multi-gpu-tuning-lines.sh - issue 19 step 1: per-size plugin rules on real NCCL.
# A table with a rule for 43,008 B (ring/ll/2 CTAs) and none for 117,440,512 B; with
# NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING the probe runs --bytes 43008,117440512
# --ops 122,1 in --launch process, all and mpi, under graph capture (the probe's graphs)
# and eager (the probe's eager all-reduces before capture, in the same log), with the
# system NCCL and the torch wheel's; and the same without the plugin, for NCCL's own
# choice at 117 MB. Writes $OUT/results/<kind>-<date>/tuning-lines/: per run the report
# (.json), the log (.err), and summary.txt with the TUNING lines per size.
#   command: scripts/device-multi-gpu-tuning-lines.sh   carry: [".carry/probe"]
set -u
. "$(dirname "$0")/device-lib.sh"
result_dir tuning-lines
table=$res/rule-43008.table
printf 'nccltune-tuner/1\nallreduce * * 43008 43008 ring ll 2 0\n' >"$table"
modes=(process all)
[ $HAVE_MPI = 1 ] && modes+=(mpi) || note "mpi: no MPI build or mpirun here (skipped)"
: >"$res/summary.txt"
for lib in system torch; do
	ldp=$LD_LIBRARY_PATH
	if [ "$lib" = torch ]; then
		[ -n "$TORCH_NCCL" ] || { note "torch NCCL not found (skipped)"; continue; }
		ldp=$TORCH_NCCL:$LD_LIBRARY_PATH
	fi
	for mode in "${modes[@]}"; do
		for plug in plugin none; do
			name=$lib-$mode-$plug
			envs=(LD_LIBRARY_PATH="$ldp" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING)
			[ $plug = plugin ] && envs+=(NCCL_TUNER_PLUGIN="$PLUGIN" NCCLTUNE_TUNER_TABLE="$table")
			cmd=("$P" --bytes 43008,117440512 --ops 122,1 --iters 20 --warmup 2)
			if [ "$mode" = mpi ]; then
				mpi=(mpirun --allow-run-as-root -np "$((ngpu > 0 ? ngpu : 1))" -x LD_LIBRARY_PATH
					-x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS -x NCCL_NVLS_ENABLE)
				[ $plug = plugin ] && mpi+=(-x NCCL_TUNER_PLUGIN -x NCCLTUNE_TUNER_TABLE)
				cmd=("${mpi[@]}" "${cmd[@]}" --launch mpi)
			else
				cmd+=(--launch "$mode")
			fi
			env "${envs[@]}" timeout 300 "${cmd[@]}" >"$res/$name.json" 2>"$res/$name.err"
			rc=$?
			{
				echo "== $name: exit $rc; results nccl: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print([(x["bytes"], x.get("nccl")) for x in r.get("results", [])] or r.get("error"))' "$res/$name.json" 2>&1)"
				grep -E "TUNER|nccltune|NCCL version" "$res/$name.err" | sort | uniq -c | head -8
				for b in 43008 117440512; do
					echo "-- TUNING lines for $b B (first 3 distinct):"
					grep -E "TUNING|Bytes" "$res/$name.err" | grep -w "$b" | sed 's/^[^ ]* //' | sort -u | head -3
				done
			} >>"$res/summary.txt"
		done
	done
done
[ "$ngpu" -ge 2 ] || note "with 1 GPU the TUNING lines are absent by design; the runs check only that every mode and library loads the plugin and runs"
cat "$res/summary.txt" "$res/run.log"
