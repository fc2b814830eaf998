#!/bin/bash
# device-run.sh - the whole probe batch on the GPU machine, in one command, writing
# into $OUT (the device tool's output folder; any folder works elsewhere).
#
# Run from the repository root with .carry/probe carried (scripts/device-build.sh makes
# it). NCCL_NVLS_ENABLE=0 is set for every run: multicast stays off on shared machines.
# Nothing here changes GPU settings. Everything lands in $OUT/probe-batch.tar.gz (the
# device tool returns at most 8 files) plus $OUT/summary.txt.
#
#   usage: scripts/device-run.sh [all|quick|failures]
#     all (default): everything below; quick: no cost grid, sanitizer or GPU tests;
#     failures: only the failure-path checks (killed ranks, sanitizer on an abort).
set -u
export NCCL_NVLS_ENABLE=0
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-$root/.carry/out}
work=$(mktemp -d /tmp/probe-batch.XXXXXX)
mkdir -p "$out" "$work/runs"
export LD_LIBRARY_PATH="$root/.carry/probe/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
P=$root/.carry/probe/bin/nccltune-probe
PARSE=$root/.carry/probe/bin/probe_parse_report
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

# The MPI build needs the machine's libmpi.so.40; fall back to the build without MPI.
if ldd "$P" | grep -q "not found"; then
	say "note: $(ldd "$P" | grep 'not found' | tr -s ' \t' ' '); using nccltune-probe-nompi"
	P=$root/.carry/probe/bin/nccltune-probe-nompi
fi

# run_case NAME [VAR=VALUE ...] -- PROBE-ARGS...: one probe run; stdout, stderr, exit
# status and wall time into $work/runs/NAME.*, the exact command into commands.txt.
run_case() {
	local name=$1 envs=() t0 t1 rc
	shift
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	echo "$name: env NCCL_NVLS_ENABLE=0 ${envs[*]} nccltune-probe $*" >>"$work/commands.txt"
	t0=$(date +%s.%N)
	env "${envs[@]}" timeout 300 "$P" "$@" >"$work/runs/$name.json" 2>"$work/runs/$name.err"
	rc=$?
	t1=$(date +%s.%N)
	echo "$rc" >"$work/runs/$name.rc"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >"$work/runs/$name.wall"
	say "$name: exit $rc, $(cat "$work/runs/$name.wall") s, parser: $("$PARSE" <"$work/runs/$name.json" 2>&1 | head -1)"
	say "    $(head -c 600 "$work/runs/$name.json")"
}

{
	echo "== machine"; uname -a; nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total --format=csv
	nvidia-smi topo -m
	echo "== libraries"; ldd "$P"; ldconfig -p | grep -E "libnccl|libcudart|libmpi.so"
	echo "== mpirun"; command -v mpirun && mpirun --version 2>&1 | head -2
	cat "$root/.carry/probe/BUILD-INFO"
} >"$work/machine.txt" 2>&1
say "probe: $P"
say "$("$P" --version | tr '\n' ' ')"

what=${1:-all}
if [ "$what" != failures ]; then
# Fingerprint, twice: must be byte-identical.
"$P" --fingerprint >"$work/fingerprint-1.json" 2>"$work/fingerprint-1.err"
"$P" --fingerprint >"$work/fingerprint-2.json" 2>"$work/fingerprint-2.err"
if cmp -s "$work/fingerprint-1.json" "$work/fingerprint-2.json"; then
	say "fingerprint: stable across two runs"
else
	say "fingerprint: DIFFERS between two runs"
fi
say "    $(cat "$work/fingerprint-1.json")"

# The protocol's default workload, each launch mode, in and out of place.
run_case process-inplace -- --bytes 43008 --ops 122 --iters 200 --warmup 20
run_case process-outofplace -- --bytes 43008 --ops 122 --iters 200 --warmup 20 --out-of-place
run_case all-inplace -- --launch all --bytes 43008 --ops 122 --iters 200 --warmup 20
run_case all-outofplace -- --launch all --bytes 43008 --ops 122 --iters 200 --warmup 20 --out-of-place
run_case sizes-outofplace -- --bytes 1024,43008,1M --ops 16 --iters 100 --out-of-place
run_case f16-outofplace -- --dtype f16 --ops 16 --iters 50 --out-of-place
run_case f32-inplace -- --dtype f32 --ops 16 --iters 50
# stdout must stay one JSON object even when NCCL logs (NCCL_DEBUG writes to stdout).
run_case debug-info NCCL_DEBUG=INFO -- --ops 4 --iters 5 --warmup 1 --out-of-place
if [ "$(wc -l <"$work/runs/debug-info.json")" = 1 ]; then
	say "debug-info: stdout is one line"
else
	say "debug-info: stdout is NOT one line"
fi

# Failures: bogus names, a step timeout far too short (exercises the abort path).
run_case algo-bogus NCCL_ALGO=Bogus NCCL_DEBUG=WARN -- --ops 4 --iters 5
run_case proto-bogus NCCL_PROTO=Bogus NCCL_DEBUG=WARN -- --ops 4 --iters 5
# ... and the same left to NCCL itself (with one rank it never parses them).
run_case algo-bogus-nccl NCCL_ALGO=Bogus NCCL_DEBUG=WARN -- --no-env-check --ops 4 --iters 5
run_case proto-bogus-nccl NCCL_PROTO=Bogus NCCL_DEBUG=WARN -- --no-env-check --ops 4 --iters 5
run_case proto-bogus-nccl-all NCCL_PROTO=Bogus NCCL_DEBUG=WARN -- --no-env-check --launch all --ops 4 --iters 5
run_case algo-tree NCCL_ALGO=Tree -- --ops 16 --iters 20 --out-of-place
run_case proto-ll NCCL_PROTO=LL -- --ops 16 --iters 20 --out-of-place
run_case step-timeout -- --step-timeout 0.001 --ops 4 --iters 5
run_case no-gpu CUDA_VISIBLE_DEVICES= -- --ops 4 --iters 5

# MPI launch with one rank (auto-detected from mpirun's variables).
if command -v mpirun >/dev/null && [ "$(basename "$P")" = nccltune-probe ]; then
	for mode in inplace outofplace; do
		flag=; [ $mode = outofplace ] && flag=--out-of-place
		echo "mpi-$mode: mpirun --allow-run-as-root -np 1 -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH nccltune-probe --ops 122 --iters 200 $flag" >>"$work/commands.txt"
		t0=$(date +%s.%N)
		timeout 300 mpirun --allow-run-as-root -np 1 -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH \
			"$P" --ops 122 --iters 200 $flag >"$work/runs/mpi-$mode.json" 2>"$work/runs/mpi-$mode.err"
		echo $? >"$work/runs/mpi-$mode.rc"
		t1=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >"$work/runs/mpi-$mode.wall"
		say "mpi-$mode: exit $(cat "$work/runs/mpi-$mode.rc"), parser: $("$PARSE" <"$work/runs/mpi-$mode.json" 2>&1 | head -1)"
		say "    $(head -c 600 "$work/runs/mpi-$mode.json")"
	done
else
	say "mpi: skipped (no mpirun or no MPI build usable here)"
fi

fi
if [ "$what" = all ]; then
	# Where a probe run's wall time goes: process start alone, then the grid.
	for i in 1 2 3 4 5; do
		t0=$(date +%s.%N); "$P" --version >/dev/null; t1=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
	done >"$work/runs/exec-version.wall"
	for place in inplace outofplace; do
		flag=; [ $place = outofplace ] && flag=--out-of-place
		for ops in 1 16 122; do
			for iters in 10 100 1000; do
				run_case "cost-$place-ops$ops-iters$iters" -- --ops $ops --iters $iters $flag
			done
		done
	done
	# GPU memory released on every path: leak check on a success and on a failure.
	cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
	if [ -x "$cs" ]; then
		for c in "outofplace:--out-of-place" "inplace:"; do
			name=sanitizer-${c%%:*}; flag=${c#*:}
			echo "$name: compute-sanitizer --tool memcheck --leak-check full nccltune-probe --launch all --ops 4 --iters 5 --warmup 1 $flag" >>"$work/commands.txt"
			timeout 240 "$cs" --tool memcheck --leak-check full "$P" --launch all \
				--ops 4 --iters 5 --warmup 1 $flag >"$work/runs/$name.out" 2>&1
			say "$name: exit $?; $(grep -E 'ERROR SUMMARY|LEAK SUMMARY|leaked' "$work/runs/$name.out" | head -3 | tr '\n' ' ')"
		done
	fi
	# The GPU test suite itself.
	python3 tests/probe/test_gpu.py "$P" "$PARSE" >"$work/runs/test_gpu.out" 2>&1
	say "test_gpu.py: exit $? ($(tail -1 "$work/runs/test_gpu.out"))"
fi

if [ "$what" = all ] || [ "$what" = failures ]; then
	# More GPUs than there are: a plain init failure.
	run_case gpus-too-many -- --gpus 64 --ops 4 --iters 5
	# A rank killed in the middle: the parent reports which rank, the signal and the step.
	echo "killed-child: nccltune-probe --ops 122 --iters 2000000 --warmup 0, child killed with SIGKILL after 4 s" >>"$work/commands.txt"
	"$P" --ops 122 --iters 2000000 --warmup 0 >"$work/runs/killed-child.json" 2>"$work/runs/killed-child.err" &
	parent=$!
	sleep 4
	child=$(pgrep -P "$parent" | head -1)
	[ -n "$child" ] && kill -KILL "$child"
	wait "$parent"
	echo $? >"$work/runs/killed-child.rc"
	say "killed-child: exit $(cat "$work/runs/killed-child.rc"), parser: $("$PARSE" <"$work/runs/killed-child.json" 2>&1 | head -1)"
	say "    $(head -c 600 "$work/runs/killed-child.json")"
	# The parent killed: PR_SET_PDEATHSIG must take the child with it.
	"$P" --ops 122 --iters 2000000 --warmup 0 >/dev/null 2>"$work/runs/killed-parent.err" &
	parent=$!
	sleep 4
	child=$(pgrep -P "$parent" | head -1)
	kill -KILL "$parent"
	wait "$parent" 2>/dev/null
	sleep 2
	if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
		say "killed-parent: child $child STILL ALIVE after its parent died"
		kill -KILL "$child"
	else
		say "killed-parent: child ${child:-?} ended with its parent"
	fi
	# GPU memory released on the abort path too: a step timeout under the leak checker.
	cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
	if [ -x "$cs" ]; then
		echo "sanitizer-abort: compute-sanitizer --tool memcheck --leak-check full nccltune-probe --launch all --step-timeout 2 --ops 4 --iters 5" >>"$work/commands.txt"
		timeout 240 "$cs" --tool memcheck --leak-check full "$P" --launch all --step-timeout 2 \
			--ops 4 --iters 5 >"$work/runs/sanitizer-abort.out" 2>&1
		say "sanitizer-abort: exit $?; $(grep -E '"ok"|LEAK SUMMARY|ERROR SUMMARY' "$work/runs/sanitizer-abort.out" | head -3 | tr '\n' ' ')"
	fi
fi

cp "$summary" "$work/summary.txt"
tar -C "$work" -czf "$out/probe-batch.tar.gz" .
say "batch written to $out/probe-batch.tar.gz"
