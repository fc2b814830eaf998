#!/bin/bash
# test_server_step.sh - the server's step (issue 18 items 3 and 4), through the CLI with
# the model probe and the fake probe: --compute-us and --window reach every probe run as
# the probe's options, the journal's workload records them, the summary gives the step
# and the all-reduces' part and what the server must turn on, --like sglang leaves
# NCCL_CUMEM_ENABLE unset under --window symmetric (its "unless": "symmetric") and sets it
# without, nothing about windows or cuMem is exported, a probe that ignores the options
# has every run refused (garbage), and hostile values are refused naming the option or
# the workload key.
# Usage: test_server_step.sh NCCLTUNE FAKEPROBE
set -u
NT=$1
FAKE=$2
MODEL="${NCCLTUNE_BUILD_ROOT:-.}/models/nccltune-model-probe"
[ -x "$MODEL" ] || { echo "FAIL: $MODEL is not built"; exit 1; }
failures=0
tmp=$(mktemp -d /tmp/nccltune-step-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
want() {   # want WHAT TEXT NEEDLE
	case "$2" in *"$3"*) ;; *) fail "$1: no '$3' in: $2" ;; esac
}

# 1. the model probe: compute and windows, under --like sglang
out=$(env -u NCCL_CUMEM_ENABLE "$NT" run --model nvlink-h200-8gpu --compute-us 40 \
	--window symmetric --like sglang --budget 8 --seed 3 --out "$tmp/s1" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "model session: exit $rc: $out"
want "summary" "$out" "step:     a 40.0 us kernel on one per SM's CTAs before each of the 122 all-reduces"
want "summary" "$out" "baseline: step "
want "summary" "$out" "--enable-symm-mem"
want "summary" "$out" "VLLM_USE_NCCL_SYMM_MEM=1"
want "notes" "$out" "not set: NCCL_CUMEM_ENABLE=0 (sglang leaves it unset when symmetric memory is on"
head -1 "$tmp/s1/journal.jsonl" | grep -q '"compute":{"kernel_us":40},"window":"symmetric"' ||
	fail "the journal's workload lacks compute and window"
grep -q '"NCCL_CUMEM_ENABLE"' "$tmp/s1/journal.jsonl" && fail "NCCL_CUMEM_ENABLE recorded as set by sglang under --window symmetric"
# every run's report says compute and window (the model probe honoured them)
n=$(grep -c '"type":"run"' "$tmp/s1/journal.jsonl")
k=$(grep '"type":"run"' "$tmp/s1/journal.jsonl" | grep '"window":"symmetric"' | grep -c '"compute":{"kernel_us":40,"ctas":132')
[ "$n" -gt 0 ] && [ "$n" -eq "$k" ] || fail "$k of $n journalled runs carry compute and window"
# exports stay clean: no window, cuMem or symmetric memory as an NCCL variable
if grep -rIl -i -E "symm|CUMEM|window|compute" "$tmp/s1/exports" >/dev/null 2>&1; then
	fail "an export names symmetric memory, cuMem or compute: $(grep -rIn -i -E 'symm|CUMEM|window|compute' "$tmp/s1/exports" | head -3)"
fi
# the step is the objective: the model's step minus 122 x 40 us is what NCCL took
base=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["baseline"]["objective_us"])' "$tmp/s1/results.json")
python3 -c 'import sys; b=float(sys.argv[1]); sys.exit(0 if b > 122*40 else 1)' "$base" ||
	fail "baseline step $base us is not above 122 x 40 us"

# 2. without --window, sglang's NCCL_CUMEM_ENABLE=0 is set, and a window is not asked
out=$(env -u NCCL_CUMEM_ENABLE "$NT" run --model nvlink-h200-8gpu --compute-us 40,100 \
	--like sglang --budget 6 --seed 3 --out "$tmp/s2" 2>&1)
want "no window" "$out" "NCCL_CUMEM_ENABLE=0"
want "no window" "$out" "kernel on 100 CTAs"
case "$out" in *"window:"*) fail "no window: the summary speaks of windows: $out" ;; esac

# 3. the fake probe: every run gets the options, and ignores them: every run is garbage
out=$(FAKEPROBE_LOG="$tmp/log" "$NT" run --probe "$FAKE" --compute-us 12.5,8 --window symmetric \
	--budget 4 --seed 1 --out "$tmp/s3" 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "fake probe ignoring --compute-us: exit 0: $out"
runs=$(grep -c . "$tmp/log" 2>/dev/null || echo 0)
with=$(grep -c -- "--compute-us 12.500,8 --window symmetric" "$tmp/log" 2>/dev/null || echo 0)
[ "$runs" -gt 0 ] && [ "$runs" -eq "$with" ] || fail "$with of $runs probe runs got --compute-us 12.500,8 --window symmetric"
grep -q 'no \\"compute\\" in the report: the probe ran no kernel' "$tmp/s3/journal.jsonl" ||
	fail "the fake probe's runs were not refused for lacking compute"

# 4. hostile values: exit 2, the option named
for v in 0 -1 nan inf 1e3 0x10 10001 40, 40,0 40,65536 40,1,2 40.0001 "" " 40"; do
	out=$("$NT" run --model nvlink-h200-8gpu --compute-us "$v" --budget 2 --out "$tmp/bad" 2>&1)
	rc=$?
	[ $rc -eq 2 ] || fail "--compute-us '$v': exit $rc, want 2: $out"
	want "--compute-us '$v'" "$out" "--compute-us"
	[ -e "$tmp/bad" ] && fail "--compute-us '$v': a session folder was made"
done
for v in Symmetric none ""; do
	out=$("$NT" run --model nvlink-h200-8gpu --window "$v" --budget 2 --out "$tmp/bad" 2>&1)
	rc=$?
	[ $rc -eq 2 ] || fail "--window '$v': exit $rc, want 2: $out"
	want "--window '$v'" "$out" "--window"
done
# workload files: the key at fault is named
wl() { printf '{"schema":"nccltune-workload/1","dtype":"bf16","collectives":[{"op":"allreduce","bytes":43008,"count":122}],%s}' "$1" >"$tmp/w.json"; }
check_wl() {   # check_wl EXTRA NEEDLE
	wl "$1"
	out=$("$NT" run --model nvlink-h200-8gpu --workload "$tmp/w.json" --budget 2 --out "$tmp/bad" 2>&1)
	rc=$?
	[ $rc -eq 2 ] || fail "workload $1: exit $rc, want 2: $out"
	want "workload $1" "$out" "$2"
}
check_wl '"compute":{"kernel_us":-1}' "compute.kernel_us"
check_wl '"compute":{"kernel_us":0}' "compute.kernel_us: 0 is not a whole number of nanoseconds above 0"
check_wl '"compute":{"kernel_us":40.0001}' "compute.kernel_us: 40.0001 is not a whole number of nanoseconds"
check_wl '"compute":{"kernel_us":20000}' "compute.kernel_us"
check_wl '"compute":{"kernel_us":40,"ctas":0}' "compute.ctas"
check_wl '"compute":{"kernel_us":40,"ctas":1.5}' "compute.ctas"
check_wl '"compute":{"kernel_us":40,"bogus":1}' "compute.bogus"
check_wl '"compute":{"ctas":8}' "compute.kernel_us"
check_wl '"compute":40' "compute"
check_wl '"window":"asymmetric"' "window"
check_wl '"window":true' "window"
# a good workload file works and reaches the probe
wl '"compute":{"kernel_us":2.5,"ctas":16},"window":"symmetric"'
out=$("$NT" run --model nvlink-h200-8gpu --workload "$tmp/w.json" --budget 4 --seed 2 --out "$tmp/s4" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "workload with compute and window: exit $rc: $out"
want "workload file" "$out" "a 2.5 us kernel on 16 CTAs"

[ $failures -eq 0 ] && echo "ok" || echo "$failures failure(s)"
[ $failures -eq 0 ]
