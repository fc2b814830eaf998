#!/bin/bash
# test_ablation.sh - the winner's variables that change nothing are dropped
# (decide/ablate.c), on the model probe: on pcie-gen5-8gpu NCCL already runs Ring/LL on
# one CTA at 43,008 B, so a forced NCCL_PROTO=LL is dropped by the baseline's decisions,
# while NCCL_NTHREADS=128 (process-level, measured without it in interleaved rounds) is
# kept. The space has no unset level, so the ablation runs leave the variables out
# ("unset" in the journal). The recommendation printed, results.json and every export
# agree; a session killed during the ablation resumes to the same recommendation within
# its budget; the journal's "unset" is checked when read back.
# Usage: test_ablation.sh NCCLTUNE. Exit 77 when the model probe is not built.
set -u
NT=$1
. "$(dirname "$0")/../lib.sh"
lib_need_model_probe
lib_init ablation

cat > "$tmp/space.json" <<'JEOF'
{"schema": "nccltune-space/1", "params": {"NCCL_PROTO": {"values": ["LL"]},
 "NCCL_NTHREADS": {"values": [64, 128, 256, 512]}}}
JEOF
out=$("$NT" run --model pcie-gen5-8gpu --space "$tmp/space.json" --budget 30 --seed 1 \
	--out "$tmp/s" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "session: exit $rc: $out"
case "$out" in *"NCCL_PROTO=LL: no effect, NCCL already ran Ring/LL on 1 CTA at 43008 B"*) ;;
	*) fail "no note of the dropped NCCL_PROTO=LL: $out" ;; esac
case "$out" in *"NCCL_NTHREADS=128: kept (without it "*"slower"*) ;;
	*) fail "no note of the kept NCCL_NTHREADS: $out" ;; esac
# the summary's best line is the recommendation: threads, no protocol
echo "$out" | grep -q "^best: .*NCCL_NTHREADS=128$" || fail "summary best line: $out"
echo "$out" | grep "^best:" | grep -q NCCL_PROTO && fail "summary recommends NCCL_PROTO"

python3 - "$tmp/s" <<'PYEOF' || failures=$((failures + 1))
import json, os, sys
d = sys.argv[1]
bad = 0
def fail(m):
    global bad
    print("FAIL:", m, file=sys.stderr)
    bad += 1
res = json.load(open(d + "/results.json"))
if res["best"]["env"] != {"NCCL_NTHREADS": "128"}:
    fail("best.env %r" % res["best"]["env"])
ab = {a["var"]: a for a in res.get("ablation", [])}
p, t = ab.get("NCCL_PROTO"), ab.get("NCCL_NTHREADS")
if not p or p["kind"] != "decision" or p["dropped"] is not True or p["value"] != "LL":
    fail("ablation NCCL_PROTO %r" % p)
if not t or t["kind"] != "process" or t["dropped"] is not False:
    fail("ablation NCCL_NTHREADS %r" % t)
elif not (t["removed_vs_kept"]["ratio"] > 1.5 and t["removed_vs_kept"]["ci95"][0] > 1.0):
    fail("NCCL_NTHREADS removal ratio %r" % t["removed_vs_kept"])
# every export agrees: the threads, never the protocol
for name in ("env.sh", "nccl.env", "nccl.conf", "env.json", "sitecustomize.py"):
    text = open(os.path.join(d, "exports", name)).read()
    lines = [l for l in text.splitlines() if not l.lstrip().startswith("#")]
    body = "\n".join(lines)
    if "NCCL_PROTO" in body or "NCCL_NTHREADS" not in body:
        fail("export %s: %s" % (name, body))
# the ablation runs: phase ablate, counted, each leaving out the dropped protocol (the
# space has no unset level) and, in the runs without threads, those too
runs = [json.loads(l) for l in open(d + "/journal.jsonl")][1:]
abl = [r for r in runs if r["phase"] == "ablate"]
if len(runs) > 30 or res["evaluations"] != len(runs):
    fail("%d runs, evaluations %d, budget 30" % (len(runs), res["evaluations"]))
if len(abl) < 4:
    fail("only %d ablation runs" % len(abl))
for r in abl:
    u = r.get("unset") or []
    if "NCCL_PROTO" not in u or "NCCL_PROTO" in r["env"]:
        fail("ablation run %d: %r %r" % (r["run"], u, r["env"]))
    if ("NCCL_NTHREADS" in u) == ("NCCL_NTHREADS" in r["env"]):
        fail("ablation run %d: threads both unset and set: %r %r" % (r["run"], u, r["env"]))
    if [x["bytes"] for x in r["report"]["results"]] != [43008]:
        fail("ablation run %d sizes" % r["run"])
sys.exit(1 if bad else 0)
PYEOF

# show prints what was dropped
"$NT" show "$tmp/s" > "$tmp/show.txt" 2>&1 || fail "show: $(cat "$tmp/show.txt")"
grep -q "NCCL_PROTO=LL: no effect" "$tmp/show.txt" || fail "show: no ablation: $(cat "$tmp/show.txt")"

# killed during the ablation: the journal cut after its first two ablation runs resumes
# to the same recommendation, the recorded runs replayed, within the budget
cut=$(python3 -c '
import json, sys
n = 0
for i, l in enumerate(open(sys.argv[1])):
    n += json.loads(l).get("phase") == "ablate"
    if n == 2:
        print(i + 1); break' "$tmp/s/journal.jsonl")
cp -r "$tmp/s" "$tmp/r"
rm -f "$tmp/r/results.json" "$tmp/r/.lock"
head -n "$cut" "$tmp/s/journal.jsonl" > "$tmp/r/journal.jsonl"
"$NT" run --resume "$tmp/r" --quiet > "$tmp/r.out" 2>&1 || fail "resume: $(cat "$tmp/r.out")"
python3 - "$tmp/s" "$tmp/r" "$cut" <<'PYEOF' || fail "the resumed session differs"
import json, sys
a, b, cut = sys.argv[1], sys.argv[2], int(sys.argv[3])
ra, rb = json.load(open(a + "/results.json")), json.load(open(b + "/results.json"))
assert ra["best"]["env"] == rb["best"]["env"], (ra["best"], rb["best"])
assert [x["var"] for x in ra["ablation"]] == [x["var"] for x in rb["ablation"]]
assert [x["dropped"] for x in ra["ablation"]] == [x["dropped"] for x in rb["ablation"]]
ja = open(a + "/journal.jsonl").read().splitlines()
jb = open(b + "/journal.jsonl").read().splitlines()
assert ja[:cut] == jb[:cut], "the recorded runs changed"
assert len(jb) - 1 <= 30, len(jb)
PYEOF

# a journal whose "unset" is not the ablation's is refused on resume, naming the line
for bad in '"unset": ["NCCL_BOGUS"]' '"unset": []' '"unset": "NCCL_PROTO"'; do
	rm -rf "$tmp/b"
	cp -r "$tmp/s" "$tmp/b"
	rm -f "$tmp/b/results.json" "$tmp/b/.lock"
	python3 - "$tmp/b/journal.jsonl" "$bad" <<'PYEOF'
import json, sys
path, bad = sys.argv[1], sys.argv[2]
lines = open(path).read().splitlines()
for i, l in enumerate(lines):
    r = json.loads(l)
    if r.get("phase") == "ablate":
        r.update(json.loads("{" + bad + "}"))
        lines[i] = json.dumps(r)
        break
open(path, "w").write("\n".join(lines) + "\n")
PYEOF
	out=$("$NT" run --resume "$tmp/b" --quiet 2>&1)
	rc=$?
	[ $rc -eq 2 ] || fail "bad unset $bad: exit $rc: $out"
	case "$out" in *"journal.jsonl:"*"unset:"*) ;; *) fail "bad unset $bad: message: $out" ;; esac
done

# The rest of the ablation's rules run as table cases on synthetic run logs, in
# milliseconds (tests/decide/test_decide.c): decision-only variables judged by one run
# without them (test_ablation_decisions), variables harmless alone but not together
# (test_ablation_table). This whole session and its resume stay.

lib_finish
