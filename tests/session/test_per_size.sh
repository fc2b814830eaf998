#!/bin/bash
# test_per_size.sh - a per-size session on the model probe (which loads nccltune's tuner
# plugin when a run's environment names it): the space's per_size block becomes rules,
# every candidate with rules runs with NCCL_TUNER_PLUGIN + NCCLTUNE_TUNER_TABLE (a
# content-addressed table under OUT/tables/ that the plugin applied: the report's `nccl`
# decision is the rule's), never with NCCL_ALGO or NCCL_PROTO; results.json has
# best.rules, and a resumed session rebuilds its tables by content (the same rules, the
# same file).
# Usage: test_per_size.sh NCCLTUNE SOURCE_ROOT. Exit 77 when the model probe is not built.
set -u
NT=$1
SRC=$2
. "$(dirname "$0")/../lib.sh"
lib_need_model_probe
lib_init per-size

# The probe, wrapped: each run's NCCL_ALGO, NCCL_PROTO, plugin and table go to a log.
cat > "$tmp/probe.sh" <<WEOF
#!/bin/sh
printf '%s|%s|%s|%s\n' "\${NCCL_ALGO-unset}" "\${NCCL_PROTO-unset}" "\${NCCL_TUNER_PLUGIN-}" \
	"\${NCCLTUNE_TUNER_TABLE-}" >> "$tmp/env.log"
exec "$(cd "$(dirname "$probe")" && pwd)/$(basename "$probe")" --model pcie-gen5-8gpu --seed 1 "\$@"
WEOF
chmod +x "$tmp/probe.sh"

out=$("$NT" run --probe "$tmp/probe.sh" --space "$SRC/examples/space-pcie-per-size.json" \
	--bytes 43008,1048576 --budget 24 --seed 3 --out "$tmp/s" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "session: exit $rc: $out"

python3 - "$tmp" <<'PYEOF' || failures=$((failures + 1))
import json, os, sys
tmp = sys.argv[1]
bad = 0
def fail(m):
    global bad
    print("FAIL:", m, file=sys.stderr)
    bad += 1
runs = [l.rstrip("\n").split("|") for l in open(tmp + "/env.log")]
runs = [r for r in runs if len(r) == 4]
if any(r[0] != "unset" or r[1] != "unset" for r in runs):
    fail("a run had NCCL_ALGO or NCCL_PROTO set")
with_table = [r for r in runs if r[3]]
if not with_table:
    fail("no run had a per-size table")
for r in with_table:
    if not r[2].startswith("/") or not os.path.exists(r[2]):
        fail("NCCL_TUNER_PLUGIN not an existing absolute path: " + r[2])
    if not r[3].startswith(os.path.realpath(tmp) + "/s/tables/"):
        fail("table outside OUT/tables/: " + r[3])
    if not os.path.exists(r[3]) or open(r[3]).readline() != "nccltune-tuner/1\n":
        fail("table missing or not nccltune-tuner/1: " + r[3])
res = json.load(open(tmp + "/s/results.json"))
best = res.get("best") or {}
if "rules" not in best:
    fail("results.json best has no rules")
for k in best.get("env", {}):
    if k.startswith("rule.") or k in ("NCCL_ALGO", "NCCL_PROTO"):
        fail("best.env names " + k)
# the plugin applied each run's rules: the report's decision is the rule's choice
hdr = None
checked = 0
matched = {}
for line in open(tmp + "/s/journal.jsonl"):
    rec = json.loads(line)
    if rec.get("type") == "session":
        hdr = rec
        continue
    if rec.get("type") != "run" or rec.get("outcome") != "ok" or rec.get("point") is None:
        continue
    if rec["phase"] == "sweep":
        # a sweep's results are the sizes' own cases (NCCL's choices); its entries are
        # the forced choices: each shows in what NCCL ran there
        for e in rec["report"].get("sweep", []):
            if not e["ok"] or "nccl" not in e:
                continue
            for kind in ("algo", "proto", "ctas"):
                if e[kind] not in (None, 0):
                    checked += 1
                    if str(e["nccl"][kind]).lower() == str(e[kind]).lower():
                        matched[kind] = matched.get(kind, 0) + 1
        continue
    params = list(hdr["space"]["params"].items())
    for res_ in rec["report"]["results"]:
        for d, (name, spec) in enumerate(params):
            if not name.startswith("rule.%d." % res_["bytes"]):
                continue
            v = spec["values"][rec["point"][d]]
            kind = name.split(".")[2]
            got = res_["nccl"]["algo" if kind == "algo" else "proto" if kind == "proto" else "ctas"]
            if v is None:
                continue
            checked += 1
            if str(got).lower() == str(v).lower():
                matched[kind] = matched.get(kind, 0) + 1
# NCCL may still refuse a rule (an IGNORE pair: LL128 where it is disabled; CTAs beyond
# the channel pool), so not every rule shows; most must, and each kind at least once.
total = sum(matched.values())
if checked == 0 or total * 2 < checked or set(matched) != {"algo", "proto", "ctas"}:
    fail("the plugin's rules do not show in what NCCL ran: %d of %d, %s" %
         (total, checked, matched))
sys.exit(1 if bad else 0)
PYEOF

# guards: the default ladder less the tuned sizes, measured in baseline, final, ablation and
# sweep runs (each sweep once, under NCCL's own choice: the guard-aware finalists) only
python3 - "$tmp/s" <<'PYEOF' || failures=$((failures + 1))
import json, sys
d = sys.argv[1]
res = json.load(open(d + "/results.json"))
rows = [(r["bytes"], r["role"]) for r in res.get("per_size", [])]
want = [(43008, "tuned"), (1048576, "tuned"), (16777216, "guard"), (134217728, "guard")]
bad = 0
if rows != want:
    print("FAIL: per_size rows", rows, "want", want, file=sys.stderr); bad += 1
if res.get("guards", {}).get("sizes") != [16777216, 134217728]:
    print("FAIL: guards", res.get("guards"), file=sys.stderr); bad += 1
for line in open(d + "/journal.jsonl"):
    r = json.loads(line)
    if r.get("type") != "run" or r.get("outcome") != "ok":
        continue
    sizes = [x["bytes"] for x in r["report"]["results"]]
    guarded = r["phase"] in ("baseline", "final", "ablate", "sweep")
    if (134217728 in sizes) != guarded:
        print("FAIL: run %d (%s) measured %s" % (r["run"], r["phase"], sizes), file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PYEOF
"$NT" show "$tmp/s" | grep -q "guard" || fail "show does not print the guard sizes"

# a finalist that slows a guard is not recommended: NCCL_PROTO=LL doubles the 117 MB
# prefill all-reduce on the PCIe model, so NCCL's defaults are the best
cat > "$tmp/ll.json" <<'JEOF'
{"schema": "nccltune-space/1", "params": {"NCCL_PROTO": {"values": ["LL"]},
 "NCCL_NTHREADS": {"values": [128, 256, 512]}}}
JEOF
out=$("$NT" run --model pcie-gen5-8gpu --space "$tmp/ll.json" --guard 117440512 --budget 30 \
	--seed 1 --out "$tmp/ll" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "guard session: exit $rc: $out"
case "$out" in *"makes the guard size 117440512 B slower than NCCL's defaults"*) ;;
	*) fail "guard session: no note of the slowed guard: $out" ;; esac
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["best"]["env"] != {})' \
	"$tmp/ll/results.json" || fail "guard session: best sets variables"
# NCCL's defaults, re-measured in every final round, are then a measured recommendation
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["verdict"] != "recommended")' \
	"$tmp/ll/results.json" || fail "guard session: the defaults are not recommended"
# ... and which variable costs what there: the decisions name NCCL_PROTO=LL (NCCL ran LL
# where the baseline ran Simple), and the runs kept for the ablation measure each
# variable's cost at that size: the protocol about 2x, the threads nothing
case "$out" in *"NCCL ran Ring/LL on 16 CTAs there instead of the baseline's Ring/Simple on 16 CTAs, as one or more of these ask: NCCL_PROTO=LL"*) ;;
	*) fail "guard session: the decisions' attribution: $out" ;; esac
case "$out" in *"NCCL_PROTO=LL: 117440512 B "*"x slower with it than without it"*) ;;
	*) fail "guard session: no measured attribution: $out" ;; esac
python3 - "$tmp/ll" <<'PYEOF' || fail "guard session: guards.attribution"
import json, sys
d = sys.argv[1]
res = json.load(open(d + "/results.json"))
at = {a["var"]: a for a in res["guards"]["attribution"]}
p, t = at["NCCL_PROTO"], at["NCCL_NTHREADS"]
assert p["bytes"] == 117440512 and p["rounds"] >= 2, p
assert p["cost"]["ratio"] > 1.5 and p["cost"]["ci95"][0] > 1.2, p
assert t["cost"]["ci95"][0] < 1.0 < t["cost"]["ci95"][1], t
runs = [json.loads(l) for l in open(d + "/journal.jsonl")][1:]
assert len(runs) <= 30 and any(r["phase"] == "ablate" for r in runs), len(runs)
# each variable's own cost, no run of the finalist less both (that measures no one's)
both = [r["run"] for r in runs if r["phase"] == "ablate" and len(r.get("unset") or []) > 1]
assert not both, "attribution runs without both variables: %r" % both
PYEOF
# a guard that is a tuned size is refused
out=$("$NT" run --model pcie-gen5-8gpu --bytes 43008 --guard 43008 --budget 5 --out "$tmp/g2" 2>&1)
[ $? -eq 2 ] || fail "--guard of a tuned size: not refused: $out"
case "$out" in *"--guard: 43008 is a tuned size, not a guard"*) ;; *) fail "--guard msg: $out" ;; esac

# a rule equal to what NCCL ran in the baseline (Ring/LL on 1 CTA at 43008 B on the PCIe
# model) is NCCL's own choice: dropped; a rule that differs in any choice is kept whole
# (its choices act together: Simple with the algorithm left to NCCL makes NCCL pick Tree,
# which fails at capture on this model, where the measured rule ran Ring/Simple)
out=$("$NT" run --model pcie-gen5-8gpu --space "$SRC/examples/space-pcie-per-size.json" \
	--budget 20 --seed 1 --out "$tmp/same" 2>&1)
[ $? -eq 0 ] || fail "same-as-baseline session failed: $out"
# the invariant, in every session here: no rule forces exactly what NCCL ran in the
# baseline, and the rules are those of the winner's point as it was measured
for d in "$tmp/same" "$tmp/s"; do
python3 - "$d" <<'PYEOF' || fail "$d: a rule forces NCCL's own baseline choice"
import json, sys
d = sys.argv[1]
base = {}
for line in open(d + "/journal.jsonl"):
    r = json.loads(line)
    if r.get("type") == "run" and r["phase"] == "baseline" and r["outcome"] == "ok":
        base = {x["bytes"]: x.get("nccl", {}) for x in r["report"]["results"]}
        break
for rule in json.load(open(d + "/results.json"))["best"].get("rules", []):
    n = base.get(rule["bytes"], {})
    if all(rule[k] is None or str(rule[k]).lower() == str(n.get(k)).lower()
           for k in ("algo", "proto", "ctas")):
        print("rule", rule, "baseline", n, file=sys.stderr)
        sys.exit(1)
# every rule kept is the winner's as measured: the rules of one final run's point
lines = [json.loads(x) for x in open(d + "/journal.jsonl")]
params = list(lines[0]["space"]["params"].items())
measured = []
for r in lines[1:]:
    if r.get("type") != "run" or r["phase"] != "final" or not r["point"]:
        continue
    rules = {}
    for (name, p), lv in zip(params, r["point"]):
        if name.startswith("rule."):
            _, b, k = name.split(".")
            rules.setdefault(int(b), {})[k] = p["values"][lv]
    measured.append(rules)
for rule in json.load(open(d + "/results.json"))["best"].get("rules", []):
    if not any(m.get(rule["bytes"]) == {k: rule[k] for k in ("algo", "proto", "ctas")}
               for m in measured):
        print("rule", rule, "is no final run's", measured[:3], file=sys.stderr)
        sys.exit(1)
PYEOF
done

# show prints the rules; a resumed session (nothing left to run) keeps best.rules
"$NT" show "$tmp/s" > "$tmp/show.txt" 2>&1 || fail "show failed"
grep -q "rules" "$tmp/show.txt" || fail "show does not print the rules: $(cat "$tmp/show.txt")"

# a resumed session rebuilds the same tables: cut the journal after its first 10 runs and
# resume (tables/ removed): the tables it writes are named by their content, so one it
# shares with the first session by name holds the same rules, and the points it runs
# again (bo's later suggestions may differ: its fits restart from the replayed data) use
# tables of their own content
cp -r "$tmp/s" "$tmp/r"
rm -f "$tmp/r/results.json" "$tmp/r/.lock"
rm -rf "$tmp/r/tables"
head -n 11 "$tmp/s/journal.jsonl" > "$tmp/r/journal.jsonl"
before=$(wc -l < "$tmp/env.log")
"$NT" run --resume "$tmp/r" --quiet > "$tmp/r.out" 2>&1 || fail "resume failed: $(cat "$tmp/r.out")"
python3 - "$tmp" "$before" <<'PYEOF' || fail "the resumed session's tables"
import json, os, sys
tmp, before = sys.argv[1], int(sys.argv[2])
again = [l.rstrip("\n").split("|") for l in open(tmp + "/env.log")][before:]
used = {os.path.basename(r[3]) for r in again if r[3]}
assert used, "the resumed session ran no point with rules"
for name in used:
    assert os.path.exists(os.path.join(tmp, "r", "tables", name)), name
shared = used & set(os.listdir(os.path.join(tmp, "s", "tables")))
assert shared, "no table in common with the first session"
for name in shared:
    assert open(os.path.join(tmp, "s", "tables", name)).read() == \
        open(os.path.join(tmp, "r", "tables", name)).read(), name
assert "rules" in json.load(open(tmp + "/r/results.json"))["best"]
PYEOF

# same-decision points are one point: on the PCIe model LL128 is IGNORE at 43008 B, so
# the rules LL, LL128 and none all run Ring/LL there; with the same NCCL_NTHREADS they are
# one point, and the final rounds re-measure one finalist per NCCL_NTHREADS level
cat > "$tmp/same.json" <<'JEOF'
{"schema": "nccltune-space/1", "per_size": {"proto": {"values": ["LL", "LL128", null]}},
 "params": {"NCCL_NTHREADS": {"values": [128, 256]}}}
JEOF
# (one point per process: a probe that cannot sweep, so the session is not two-level)
cat > "$tmp/plain.sh" <<WEOF
#!/bin/sh
for a in "\$@"; do [ "\$a" = --capabilities ] && { echo "plain: no --capabilities" >&2; exit 2; }; done
exec "$(cd "$(dirname "$probe")" && pwd)/$(basename "$probe")" --model pcie-gen5-8gpu --seed 1 "\$@"
WEOF
chmod +x "$tmp/plain.sh"
out=$("$NT" run --probe "$tmp/plain.sh" --space "$tmp/same.json" --budget 30 --seed 1 \
	--out "$tmp/same1" 2>&1)
[ $? -eq 0 ] || fail "same-point session: $out"
case "$out" in *"is the same point as"*"not a finalist of its own"*) ;;
	*) fail "same-point session: no note: $out" ;; esac
python3 - "$tmp/same1" <<'PYEOF' || fail "same-point session: finalists"
import json, sys
d = sys.argv[1]
finals = {tuple(r["point"]) for r in map(json.loads, open(d + "/journal.jsonl"))
          if r.get("type") == "run" and r["phase"] == "final" and r["point"] is not None}
threads = [p[0] for p in finals]
assert len(finals) == 2 and sorted(threads) == [0, 1], finals
PYEOF
# ... but the same decisions with another process-level variable are another point: the
# buffer size changes nothing NCCL decides, and each level keeps a finalist
cat > "$tmp/same2.json" <<'JEOF'
{"schema": "nccltune-space/1", "per_size": {"proto": {"values": ["LL", null]}},
 "params": {"NCCL_BUFFSIZE": {"values": [65536, 131072]}}}
JEOF
"$NT" run --model pcie-gen5-8gpu --space "$tmp/same2.json" --budget 30 --seed 1 \
	--out "$tmp/same2" > "$tmp/same2.out" 2>&1 || fail "same2: $(cat "$tmp/same2.out")"
python3 - "$tmp/same2" <<'PYEOF' || fail "same2: a buffer size merged away"
import json, sys
d = sys.argv[1]
finals = {tuple(r["point"]) for r in map(json.loads, open(d + "/journal.jsonl"))
          if r.get("type") == "run" and r["phase"] == "final" and r["point"] is not None}
assert sorted({p[0] for p in finals}) == [0, 1] and len(finals) == 2, finals
PYEOF

# NCCL_ALGO next to per_size is refused before anything runs
cat > "$tmp/bad.json" <<'JEOF'
{"schema": "nccltune-space/1", "per_size": {"proto": {"values": ["LL", null]}},
 "params": {"NCCL_ALGO": {"values": ["Ring", null]}}}
JEOF
out=$("$NT" run --model pcie-gen5-8gpu --space "$tmp/bad.json" --budget 5 --out "$tmp/bad" 2>&1)
rc=$?
[ $rc -eq 2 ] || fail "NCCL_ALGO with per_size: exit $rc, want 2: $out"
case "$out" in *"may not also search or fix NCCL_ALGO or NCCL_PROTO"*) ;;
	*) fail "NCCL_ALGO with per_size: message: $out" ;; esac
[ ! -e "$tmp/bad/journal.jsonl" ] || fail "NCCL_ALGO with per_size: a session started"

lib_finish
