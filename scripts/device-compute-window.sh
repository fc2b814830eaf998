#!/bin/bash
# device-compute-window.sh - on the GPU machine (one H200): the device checks of issue 18
# items 3 and 4.
#   1. --compute-us: the PTX kernel loads (JIT for the GPU at hand), the step grows by
#      about ops x kernel_us, the kernel alone is timed, allreduce_us is what is left;
#      with the default CTAs (one per SM) and with twice that;
#   2. --window symmetric: runs on the system's NCCL and on torch's (one rank: NCCL may
#      run no symmetric kernel; NCCL_DEBUG=INFO lines say what it did), and
#      NCCL_CUMEM_ENABLE=0 is refused at stage env;
#   3. tests/probe/test_gpu.py (the GPU suite, the new checks included);
#   4. a session searching the server option ("server": {"symmetric": [false, true]}) on
#      torch's NCCL under --like sglang: symmetric runs get --window symmetric and
#      NCCL_CUMEM_ENABLE=1, the summary says what to turn on and "unknown" for the kernel
#      (one rank: no TUNING line), no export sets cuMem or symmetric memory.
# Build first: scripts/device-build.sh (here), then carry .carry/probe:
#   run(command="scripts/device-compute-window.sh", carry=[".carry/probe"], timeout_s=400)
# Writes $OUT/compute-window.txt (everything), $OUT/cw-test-gpu.txt and the reports in
# $OUT/cw-reports.tar.gz (the device tool returns at most 8 files). NCCL_NVLS_ENABLE=0.
set -u
. "$(dirname "$0")/device-lib.sh"
dest=${OUT:-$root/.carry/out}
out=$(mktemp -d /tmp/cw.XXXXXX)
mkdir -p "$dest"
log=$dest/compute-window.txt
: >"$log"
say() { echo "$*" | tee -a "$log"; }
W="--bytes 43008 --ops 122 --iters 50 --warmup 5"
# show NAME: the headline numbers of $out/cw-NAME.json
show() {
	python3 - "$out/cw-$1.json" <<'EOF' | tee -a "$log"
import json, sys
try:
    o = json.load(open(sys.argv[1]))
except Exception as e:
    print("  no report: %s" % e); sys.exit()
if not o.get("ok"):
    print("  FAILED at %s: %s" % (o.get("stage"), o.get("error"))); sys.exit()
for r in o["results"]:
    print("  %d B x %d ops: us median %.4f p10 %.4f p90 %.4f; step_us %s allreduce_us %s; nccl %s"
          % (r["bytes"], r["ops"], r["us"]["median"], r["us"]["p10"], r["us"]["p90"],
             r.get("step_us"), r.get("allreduce_us"), r.get("nccl")))
if "compute" in o:
    c = o["compute"]
    print("  compute: kernel_us %s ctas %s alone us median %.3f (p10 %.3f p90 %.3f)"
          % (c["kernel_us"], c["ctas"], c["us"]["median"], c["us"]["p10"], c["us"]["p90"]))
print("  window: %s; nccl_version %s; nranks %s" % (o.get("window"), o.get("nccl_version"), o.get("nranks")))
EOF
}
say "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
say "$("$P" --version 2>&1 | head -1); capabilities: $("$P" --capabilities)"

say "== 1. compute between the all-reduces ($W)"
for c in none 40 40,264 10,8; do
	if [ "$c" = none ]; then args=""; else args="--compute-us $c"; fi
	say "\$ nccltune-probe $W $args"
	"$P" $W $args >"$out/cw-compute-${c/,/_}.json" 2>"$out/cw.err"
	say "  exit $?"
	show "compute-${c/,/_}"
	grep -iE "error|warn" "$out/cw.err" | head -3 | tee -a "$log"
done

say "== 2. symmetric windows"
for nccl in system torch; do
	extra=""
	[ "$nccl" = torch ] && [ -n "$TORCH_NCCL" ] && extra="--nccl $TORCH_NCCL/libnccl.so.2"
	[ "$nccl" = torch ] && [ -z "$extra" ] && { say "  torch's NCCL not found: skipped"; continue; }
	say "\$ nccltune-probe $W --window symmetric $extra"
	"$P" $W --window symmetric $extra >"$out/cw-window-$nccl.json" 2>"$out/cw.err"
	say "  exit $?"
	show "window-$nccl"
	say "  (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,REG,TUNING,ALLOC: lines naming windows/symmetric/cuMem)"
	NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,REG,TUNING,ALLOC "$P" $W --window symmetric $extra \
		>"$out/cw-window-$nccl-debug.json" 2>"$out/cw.err"
	say "  exit $?"
	grep -iE "symm|window|cumem|register" "$out/cw.err" | sed 's/^[^ ]* //' | sort | uniq -c |
		sort -rn | head -12 | tee -a "$log"
done
say "\$ NCCL_CUMEM_ENABLE=0 nccltune-probe $W --window symmetric"
NCCL_CUMEM_ENABLE=0 "$P" $W --window symmetric >"$out/cw-window-nocumem.json" 2>/dev/null
say "  exit $?: $(head -c 400 "$out/cw-window-nocumem.json")"
say "\$ nccltune-probe $W --window symmetric --compute-us 40 --out-of-place --launch all"
"$P" $W --window symmetric --compute-us 40 --out-of-place --launch all \
	>"$out/cw-both.json" 2>"$out/cw.err"
say "  exit $?"
show both

say "== 3. tests/probe/test_gpu.py"
timeout 200 python3 tests/probe/test_gpu.py "$P" "$bin/probe_parse_report" "$PLUGIN" \
	>"$dest/cw-test-gpu.txt" 2>&1
say "  exit $?"
tail -15 "$dest/cw-test-gpu.txt" | tee -a "$log"
say "== 4. nccltune run: the server option as a search dimension (torch's NCCL, --like sglang)"
printf '{"schema": "nccltune-space/1", "params": {"NCCL_PROTO": {"values": ["LL", "Simple", null]}}, "server": {"symmetric": [false, true]}}' >"$out/symm-space.json"
py=/opt/torch/.venv/bin/python3
NCCL_NVLS_ENABLE=0 timeout 300 "$bin/nccltune" run --python "$py" --like sglang \
	--space "$out/symm-space.json" --budget 14 --seed 1 --out "$out/symm" \
	>"$out/symm.txt" 2>&1
say "  exit $?"
sed -n '/^session:/,$p' "$out/symm.txt" | tee -a "$log"
grep -c '"window":"symmetric"' "$out/symm/journal.jsonl" | sed 's/^/  runs reporting a symmetric window: /' | tee -a "$log"
"$bin/nccltune" export --format shell "$out/symm" >"$out/symm.sh" 2>&1
grep -E "^export .*(CUMEM|SYMM)" "$out/symm.sh" && say "  FAIL: the export sets cuMem or symmetric memory"
grep -E "symm|server option" "$out/symm.sh" | tee -a "$log"
rm -f "$out/cw.err"
tar -czf "$dest/cw-reports.tar.gz" -C "$out" .
