#!/bin/bash
# device-teardown.sh - --teardown clean against --teardown fast on the GPU machine, side
# by side, in one command, writing into $OUT (any folder works elsewhere).
#
# Run from the repository root with .carry/probe carried (scripts/device-build.sh makes
# it). NCCL_NVLS_ENABLE=0 for every run; nothing here changes GPU settings.
#
# For each launch mode (per process, --launch all), ROUNDS rounds of one clean and one
# fast run, alternating (clean first in odd rounds, fast first in even ones) so drift
# hits both alike; in place, --ops 122 --iters 200. Wall time is taken outside the
# probe (date +%s.%N). Then: the reports' content compared (everything but timings),
# GPU processes and memory after the runs (nvidia-smi), MPI (clean by default; fast
# refused), and tests/probe/test_gpu.py.
#
#   usage: scripts/device-teardown.sh [ROUNDS]   (default 10)
#   output: $OUT/teardown.tsv (mode, teardown, round, exit, wall_s, phases_s.teardown),
#           $OUT/teardown-summary.txt, $OUT/teardown-runs.tar.gz (every report).
set -u
export NCCL_NVLS_ENABLE=0
rounds=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-$root/.carry/out}
work=$(mktemp -d /tmp/teardown.XXXXXX)
mkdir -p "$out" "$work/runs"
export LD_LIBRARY_PATH="$root/.carry/probe/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
P=$root/.carry/probe/bin/nccltune-probe
PARSE=$root/.carry/probe/bin/probe_parse_report
if ldd "$P" | grep -q "not found"; then
	P=$root/.carry/probe/bin/nccltune-probe-nompi
fi
summary=$out/teardown-summary.txt
tsv=$out/teardown.tsv
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
ARGS=(--ops 122 --iters 200)

say "probe: $P"
say "$("$P" --version | tr '\n' ' ')"
say "$(nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.used,memory.total --format=csv,noheader)"
say "command per run: env NCCL_NVLS_ENABLE=0 nccltune-probe ${ARGS[*]} [--launch all] --teardown clean|fast"

printf 'mode\tteardown\tround\texit\twall_s\tteardown_phase_s\n' >"$tsv"
one() {   # one MODE HOW ROUND
	local mode=$1 how=$2 i=$3 name t0 t1 rc extra=()
	[ "$mode" = all ] && extra=(--launch all)
	name=$mode-$how-$i
	t0=$(date +%s.%N)
	timeout 120 "$P" "${ARGS[@]}" "${extra[@]}" --teardown "$how" \
		>"$work/runs/$name.json" 2>"$work/runs/$name.err"
	rc=$?
	t1=$(date +%s.%N)
	printf '%s\t%s\t%d\t%d\t%s\t%s\n' "$mode" "$how" "$i" "$rc" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" \
		"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("phases_s",{}).get("teardown","NA"))' "$work/runs/$name.json" 2>/dev/null || echo NA)" >>"$tsv"
}
for mode in process all; do
	for i in $(seq 1 "$rounds"); do
		if [ $((i % 2)) = 1 ]; then one "$mode" clean "$i"; one "$mode" fast "$i"
		else one "$mode" fast "$i"; one "$mode" clean "$i"; fi
	done
done

say "== wall time per run (s), median over $rounds runs, and the ratio fast/clean"
python3 - "$tsv" <<'EOF' | tee -a "$summary"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
for mode in ["process", "all"]:
    med = {}
    for how in ["clean", "fast"]:
        r = [x for x in rows if x["mode"] == mode and x["teardown"] == how]
        w = sorted(float(x["wall_s"]) for x in r)
        ph = sorted(float(x["teardown_phase_s"]) for x in r if x["teardown_phase_s"] != "NA")
        bad = [x["round"] for x in r if x["exit"] != "0"]
        med[how] = statistics.median(w)
        print("%-7s %-5s n=%d exit!=0 in rounds %s  wall median %.4f min %.4f max %.4f"
              "  teardown phase median %.4f" % (mode, how, len(w), bad or "none", med[how],
                                                 w[0], w[-1], statistics.median(ph) if ph else -1))
    print("%-7s fast/clean wall (medians): %.3f" % (mode, med["fast"] / med["clean"]))
EOF

say "== report content, timings left out: identical across all runs of a mode?"
python3 - "$work/runs" <<'EOF' | tee -a "$summary"
import glob, json, os, sys
def strip(o):
    o = dict(o)
    o.pop("phases_s", None)
    o["results"] = [{k: v for k, v in r.items() if k != "us"} for r in o.get("results", [])]
    return json.dumps(o, sort_keys=True)
for mode in ["process", "all"]:
    seen = {}
    for f in sorted(glob.glob(os.path.join(sys.argv[1], mode + "-*.json"))):
        try:
            key = strip(json.load(open(f)))
        except ValueError:
            key = "NOT JSON"
        seen.setdefault(key, []).append(os.path.basename(f))
    print("%s: %d distinct content(s)" % (mode, len(seen)))
    for k, v in seen.items():
        print("  %d runs: %s" % (len(v), k[:400]))
EOF
for f in "$work"/runs/*.json; do "$PARSE" <"$f" >/dev/null 2>&1 || say "parser rejects $(basename "$f")"; done

say "== after the runs: GPU processes and memory"
sleep 1
say "compute apps: [$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader)]"
say "memory.used: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader)"
say "probe processes left: [$(pgrep -a nccltune-probe || true)]"

say "== MPI (default teardown is clean; fast is refused)"
if command -v mpirun >/dev/null && [ "$(basename "$P")" = nccltune-probe ]; then
	for flag in "" "--teardown fast"; do
		name=mpi-default; [ -n "$flag" ] && name=mpi-fast
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086
		timeout 120 mpirun --allow-run-as-root -np 1 -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH \
			"$P" "${ARGS[@]}" $flag >"$work/runs/$name.out" 2>"$work/runs/$name.err"
		rc=$?
		t1=$(date +%s.%N)
		say "mpirun -np 1 nccltune-probe ${ARGS[*]} $flag: exit $rc, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s: $(head -c 300 "$work/runs/$name.out")"
	done
else
	say "skipped (no mpirun or no MPI build usable)"
fi

say "== tests/probe/test_gpu.py"
python3 tests/probe/test_gpu.py "$P" "$PARSE" >"$work/runs/test_gpu.txt" 2>&1
say "exit $? : $(tail -3 "$work/runs/test_gpu.txt" | tr '\n' ' ')"
say "compute apps after the tests: [$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader)]"

tar -C "$work" -czf "$out/teardown-runs.tar.gz" runs
rm -rf "$work"
