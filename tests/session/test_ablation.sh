#!/bin/bash
# test_ablation.sh - the winner's variables that change nothing are dropped
# (decide/ablate.c), on the model probe: on pcie-gen5-8gpu NCCL already runs Ring/LL on
# one CTA at 43,008 B, so a forced NCCL_PROTO=LL is dropped by the baseline's decisions,
# while NCCL_NTHREADS=128 (process-level, measured without it in interleaved rounds) is
# kept. The space has no unset level, so the ablation runs leave the variables out
# ("unset" in the journal). The recommendation printed, results.json and every export
# agree; a session killed during the ablation resumes to the same recommendation within
# its budget; the journal's "unset" is checked when read back. Two variables that stand
# in for each other (the fake probe's FAKEPROBE_EITHER) are each harmless to drop alone
# but not together: one of them stays, as measured.
# Usage: test_ablation.sh NCCLTUNE FAKEPROBE. Exit 77 when the model probe is not built.
set -u
NT=$1
FAKE=$2
probe="${NCCLTUNE_BUILD_ROOT:-.}/models/nccltune-model-probe"
[ -x "$probe" ] || { echo "skipped: $probe is not built"; exit 77; }
tmp=$(mktemp -d /tmp/nccltune-ablation-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

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

# decision-only variables the baseline cannot settle get one run without them: on the
# PCIe model NCCL_MAX_NCHANNELS=2 puts the 43008 B op on 2 CTAs (the baseline runs 1), so
# NCCL_MIN_NCHANNELS=1 is judged by a run without it (the same decisions everywhere:
# dropped) and NCCL_MAX_NCHANNELS=2 too (without it NCCL runs more CTAs: kept)
cat > "$tmp/ch.json" <<'JEOF'
{"schema": "nccltune-space/1", "params": {"NCCL_MIN_NCHANNELS": {"values": [1]},
 "NCCL_MAX_NCHANNELS": {"values": [2]}, "NCCL_NTHREADS": {"values": [128]}}}
JEOF
out=$("$NT" run --model pcie-gen5-8gpu --space "$tmp/ch.json" --budget 24 --seed 1 \
	--out "$tmp/ch" 2>&1)
[ $? -eq 0 ] || fail "channels session: $out"
python3 - "$tmp/ch" <<'PYEOF' || fail "channels session: $out"
import json, sys
d = sys.argv[1]
res = json.load(open(d + "/results.json"))
assert res["best"]["env"] == {"NCCL_MAX_NCHANNELS": "2", "NCCL_NTHREADS": "128"}, res["best"]
ab = {a["var"]: a for a in res["ablation"]}
mn, mx = ab["NCCL_MIN_NCHANNELS"], ab["NCCL_MAX_NCHANNELS"]
assert mn["dropped"] and "without it NCCL ran the same at every size" in mn["why"], mn
assert not mx["dropped"] and "without it NCCL ran Ring/LL on" in mx["why"], mx
runs = {json.loads(l).get("run"): json.loads(l) for l in open(d + "/journal.jsonl")}
# the runs named are ablation runs without that variable
for a in (mn, mx):
    r = runs[a["run"]]
    assert r["phase"] == "ablate" and a["var"] in r["unset"], r
PYEOF

# dropped one at a time is not dropped together: NCCL_BUFFSIZE=4194304 (the fake probe's
# unset value) and NCCL_P2P_LEVEL=SYS change nothing alone, but the fake probe is 5 us
# slower per op when neither is set; the ablation's rounds measure the best less both,
# keep one, and never recommend the defaults the winner beat. (Both dropped when dropping
# both is measured harmless: test_models.py, pcie-4gpu-switch seed 1.)
cat > "$tmp/either.json" <<'JEOF'
{"schema": "nccltune-space/1", "params": {"NCCL_BUFFSIZE": {"values": [4194304]},
 "NCCL_P2P_LEVEL": {"values": ["SYS"]}}}
JEOF
for knob in "NCCL_BUFFSIZE,NCCL_P2P_LEVEL:5"; do
	d="$tmp/either"
	out=$(FAKEPROBE_EITHER="$knob" "$NT" run --probe "$FAKE" --space "$tmp/either.json" \
		--budget 30 --out "$d" 2>&1)
	[ $? -eq 0 ] || { fail "either session ($knob): $out"; continue; }
	python3 - "$d" "$knob" <<'PYEOF' || fail "either session ($knob): $out"
import json, sys
d, knob = sys.argv[1], sys.argv[2]
res = json.load(open(d + "/results.json"))
env, gain = res["best"]["env"], res["gain"]["ratio"]
ab = {a["var"]: a for a in res["ablation"]}
runs = [json.loads(l) for l in open(d + "/journal.jsonl")][1:]
both = [r for r in runs if r["phase"] == "ablate" and
        sorted(r.get("unset") or []) == ["NCCL_BUFFSIZE", "NCCL_P2P_LEVEL"]]
assert len(both) >= 2, "the best less both was not measured in two rounds: %r" % both
assert len(env) == 1 and gain > 1.1, (env, gain)
kept = [a for a in ab.values() if not a["dropped"]]
assert len(kept) == 1 and "removed together with the others 1.12x slower" in kept[0]["why"], ab
for name in ("env.sh", "nccl.env", "env.json", "sitecustomize.py"):
    body = [l for l in open(d + "/exports/" + name).read().splitlines()
            if not l.lstrip().startswith("#")]
    assert sum(v in "\n".join(body) for v in ("NCCL_BUFFSIZE", "NCCL_P2P_LEVEL")) == 1, \
        (name, body)
PYEOF
done

[ $failures -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "ok"
