#!/usr/bin/env bash
# test_verdict.sh - no gain without an interval. A session too small to re-measure its
# best against NCCL's defaults in two interleaved final rounds says so everywhere:
# results.json has "verdict": "not measured enough to recommend", "gain": null and the
# smallest --budget that would do ("budget_needed"); the summary, `show` and report.html
# say "not measured enough to recommend; run with --budget N or more" and state no gain;
# every export is comments only (env.json has an empty "env" and the verdict). With that budget the session recommends.
# Usage: test_verdict.sh NCCLTUNE FAKEPROBE
set -u
NT=$1
FAKE=$2
. "$(dirname "$0")/../lib.sh"
lib_init verdict
lib_unset_nccl
json() { lib_json "$@"; }

# one whole session too small to measure twice; budget_needed's arithmetic for other
# budgets, tries and baselines is a table case (tests/decide/test_decide.c,
# test_budget_needed)
for budget in 9; do
	s="$tmp/b$budget"
	out=$("$NT" run --probe "$FAKE" --budget $budget --seed 3 --out "$s" 2>&1) ||
		fail "budget $budget: exit $?: $out"
	[ "$(json "$s/results.json" 'd["verdict"]')" = "not measured enough to recommend" ] ||
		fail "budget $budget: verdict $(json "$s/results.json" 'd.get("verdict")')"
	[ "$(json "$s/results.json" 'd["gain"]')" = "None" ] ||
		fail "budget $budget: a gain without an interval: $(json "$s/results.json" 'd["gain"]')"
	need=$(json "$s/results.json" 'd["budget_needed"]')
	[ "$need" = 20 ] || fail "budget $budget: budget_needed $need, want 20"
	case "$out" in
	*"not measured enough to recommend; run with --budget 20 or more"*) ;;
	*) fail "budget $budget: the summary does not say so: $out" ;;
	esac
	case "$out" in *"gain:"*|*"use it:"*) fail "budget $budget: the summary states a gain or an export: $out" ;; esac
	show=$("$NT" show "$s" 2>&1) || fail "budget $budget: show exit $?"
	case "$show" in
	*"not measured enough to recommend; run with --budget 20 or more"*) ;;
	*) fail "budget $budget: show does not say so: $show" ;;
	esac
	case "$show" in *"x faster"*) fail "budget $budget: show states a gain: $show" ;; esac
	grep -q "not measured enough to recommend" "$s/report.html" ||
		fail "budget $budget: report.html does not say so"
	for f in "$s"/exports/*; do
		case "$f" in
		*.json) python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "nccltune-env/1" and d["env"] == {}, d
assert d["verdict"].startswith("not measured enough to recommend"), d
' "$f" || fail "budget $budget: $f recommends something: $(cat "$f")" ;;
		*tuner.csv|*nccl-tuner.table)
		   # tables: nothing but comments (and the plugin table's schema line)
		   if grep -v '^#' "$f" | grep -v '^nccltune-tuner/1$' | grep -q .; then
			fail "budget $budget: $f holds rules: $(cat "$f")"
		   fi
		   grep -q "not measured enough to recommend" "$f" || fail "budget $budget: $f does not say why" ;;
		*) if grep -v '^#' "$f" | grep -q 'NCCL_'; then
			fail "budget $budget: $f sets something: $(cat "$f")"
		   fi
		   grep -q "not measured enough to recommend" "$f" || fail "budget $budget: $f does not say why" ;;
		esac
	done
done

s="$tmp/b20"
out=$("$NT" run --probe "$FAKE" --budget 20 --seed 3 --out "$s" 2>&1) || fail "budget 20: exit $?: $out"
[ "$(json "$s/results.json" 'd["verdict"]')" = "recommended" ] ||
	fail "budget 20: verdict $(json "$s/results.json" 'd.get("verdict")')"
[ "$(json "$s/results.json" 'len(d["gain"]["ci95"])')" = 2 ] || fail "budget 20: the gain has no interval"
case "$out" in *"gain:"*"[95%"*) ;; *) fail "budget 20: no gain with its interval: $out" ;; esac
grep -v '^#' "$s/exports/env.sh" | grep -q '^export NCCL_' || fail "budget 20: env.sh sets nothing"

# a search that runs out of space before its share of the budget leaves the rest to the
# final rounds (the ablation's reserve kept): three points at budget 14 are re-measured in
# two or more rounds and recommended
printf '{"schema": "nccltune-space/1", "params": {"NCCL_PROTO": {"values": ["LL", "Simple", null]}}}' \
	>"$tmp/small.json"
s="$tmp/small"
out=$("$NT" run --probe "$FAKE" --space "$tmp/small.json" --budget 14 --seed 3 --out "$s" 2>&1) ||
	fail "small space: exit $?: $out"
case "$out" in *"search ended: every allowed configuration tried"*) ;;
	*) fail "small space: the search did not run out of points: $out" ;; esac
[ "$(json "$s/results.json" 'd["verdict"]')" = "recommended" ] ||
	fail "small space: verdict $(json "$s/results.json" 'd.get("verdict")')"
[ "$(json "$s/results.json" 'd["baseline"]["repeats"] >= 2 and d["best"]["repeats"] >= 2')" = True ] ||
	fail "small space: fewer than two final rounds: $(json "$s/results.json" '(d["baseline"], d["best"])')"
[ "$(json "$s/results.json" 'd["evaluations"] <= 14')" = True ] || fail "small space: over the budget"
# the same with a time limit, killed during its final rounds: the resumed session plans
# the same rounds (it cannot tell why the search stopped; the plan does not ask)
s="$tmp/small-timed"
"$NT" run --probe "$FAKE" --space "$tmp/small.json" --budget 14 --time-limit 1h --seed 3 \
	--out "$s" --quiet >/dev/null 2>&1 || fail "small space, time limit: exit $?"
mkdir -p "$s-cut"
head -n 9 "$s/journal.jsonl" >"$s-cut/journal.jsonl"
out=$("$NT" run --resume "$s-cut" 2>&1) || fail "small space, resumed: exit $?: $out"
[ "$(json "$s-cut/results.json" 'd["verdict"], d["gain"]')" = "$(json "$s/results.json" 'd["verdict"], d["gain"]')" ] ||
	fail "small space, resumed: $(json "$s-cut/results.json" 'd["verdict"], d["gain"]'): $out"

# a resumed session runs the probe with the timing options the journal's header recorded
# (the workload's iters and warmup), not the defaults
printf '{"schema": "nccltune-workload/1", "dtype": "bf16", "collectives": [{"op": "allreduce", "bytes": 43008, "count": 122}], "iters": 37, "warmup": 3}' \
	>"$tmp/timing.json"
s="$tmp/timing"
"$NT" run --probe "$FAKE" --workload "$tmp/timing.json" --budget 12 --seed 3 --out "$s" \
	--quiet >/dev/null 2>&1 || fail "timing options: exit $?"
mkdir -p "$s-cut"
head -n 4 "$s/journal.jsonl" >"$s-cut/journal.jsonl"
FAKEPROBE_LOG="$tmp/timing.log" "$NT" run --resume "$s-cut" --quiet >/dev/null 2>&1 ||
	fail "timing options, resumed: exit $?"
grep -q -- "--iters 37 --warmup 3" "$tmp/timing.log" && ! grep -- "--bytes" "$tmp/timing.log" |
	grep -v -q -- "--iters 37 --warmup 3" ||
	fail "timing options, resumed: $(head -3 "$tmp/timing.log")"
# a header without them (an older or hand-made journal): the probe's defaults
mkdir -p "$s-old"
python3 - "$s-cut/journal.jsonl" "$s-old/journal.jsonl" <<'PYEOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()[:4]
h = json.loads(lines[0])
del h["iters"], h["warmup"]
open(sys.argv[2], "w").write("\n".join([json.dumps(h)] + lines[1:]) + "\n")
PYEOF
FAKEPROBE_LOG="$tmp/timing-old.log" "$NT" run --resume "$s-old" --quiet >/dev/null 2>&1 ||
	fail "timing options, no header keys: exit $?"
grep -q -- "--iters 200 --warmup 20" "$tmp/timing-old.log" ||
	fail "timing options, no header keys: $(head -3 "$tmp/timing-old.log")"

# a time limit keeps time for two final rounds: with runs of about 0.25 s, --time-limit
# 5s and budget 40 the search stops in time for the finalists to be re-measured twice and
# recommended. (How many runs that keeps, two rounds rather than the whole reserve, is a
# table case: test_decide.c, test_budget_needed; nothing here counts runs against the
# clock, which a loaded machine slows.)
s="$tmp/timed"
out=$(FAKEPROBE_SLEEP_MS=250 "$NT" run --probe "$FAKE" --budget 40 --time-limit 5s --seed 3 \
	--out "$s" 2>&1) || fail "time limit: exit $?: $out"
[ "$(json "$s/results.json" 'd["verdict"]')" = "recommended" ] ||
	fail "time limit: verdict $(json "$s/results.json" 'd.get("verdict")'): $out"
python3 - "$s/journal.jsonl" <<'PYEOF' || fail "time limit: $out"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])][1:]
search = [r for r in runs if r["phase"] == "search"]
final = [r for r in runs if r["phase"] == "final"]
assert len(search) >= 1, "no search run"
assert len(final) >= 4, "%d final runs" % len(final)
PYEOF

lib_finish
