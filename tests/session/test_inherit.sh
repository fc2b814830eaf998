#!/bin/bash
# test_inherit.sh - the environment a session runs in is explicit (issue 27 item 5,
# issue 31 M6): an inherited NCCL_ALGO in a per-size session is a warning, pinned in the
# journal's header, results.json, the summary line and the exports; an inherited
# NCCL_DEBUG is reported and never pinned, as is NCCL_VERSION (a container label); an earlier env.sh's NCCL_TUNER_PLUGIN /
# NCCLTUNE_TUNER_TABLE, a loader variable, CUDA_LAUNCH_BLOCKING and an unknown NCCL_ name
# are refused before any run (no journal), as are loader and logging variables in a
# --try and in a space; a resumed session refuses a variable its journal does not pin.
# Also one meaning of "recommended" (issue 27 item 6): the verdict and --json's
# shown_faster/gain_ci95 of a shown-faster and of a not-shown-faster session.
# Usage: test_inherit.sh NCCLTUNE
set -u
NT=$1
failures=0
tmp=$(mktemp -d /tmp/nccltune-inherit-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
run() {   # run DIR [VAR=VALUE...] -- [ARGS...]: a model session of $budget runs in DIR
	local dir=$1
	shift
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	env -u NCCL_DEBUG -u NCCL_ALGO "${vars[@]}" "$NT" run --model nvlink-h200-8gpu \
		--budget "$budget" --seed 3 --out "$dir" "$@" >"$dir.stdout" 2>"$dir.out"
}

# NCCL_ALGO inherited into a per-size session: warned, pinned and carried everywhere
# (30 runs: enough for a result the exports set)
budget=30
run "$tmp/algo" NCCL_ALGO=Ring NCCL_DEBUG=WARN NCCL_VERSION=2.28.3-1 -- --json
rc=$?
[ $rc -eq 0 ] || fail "NCCL_ALGO session: exit $rc: $(cat "$tmp/algo.out")"
grep -q "warning: NCCL_ALGO=Ring is set in your environment: pinned" "$tmp/algo.out" ||
	fail "no warning for NCCL_ALGO: $(cat "$tmp/algo.out")"
grep -q "NCCL_DEBUG=WARN is set in your environment: passed to every run, not recorded" \
	"$tmp/algo.out" || fail "NCCL_DEBUG not reported: $(cat "$tmp/algo.out")"
grep -q "^pinned: *NCCL_ALGO=Ring" "$tmp/algo.out" || fail "summary line lacks the pin"
# NCCL_VERSION, the label NVIDIA's container images set: said once, never refused or pinned
[ "$(grep -c "NCCL_VERSION=2.28.3-1 is set in your environment: a container label NCCL does not read" \
	"$tmp/algo.out")" = 1 ] || fail "NCCL_VERSION not said once: $(cat "$tmp/algo.out")"
python3 - "$tmp/algo" <<'PY' || fail "NCCL_ALGO session: journal/results checks failed"
import json, sys
d = sys.argv[1]
head = json.loads(open(d + "/journal.jsonl").readline())
assert head["pinned"] == {"NCCL_ALGO": "Ring"}, head["pinned"]
res = json.load(open(d + "/results.json"))
assert res["pinned"] == {"NCCL_ALGO": "Ring"}, res["pinned"]
# one meaning of "recommended" (issue 27 item 6): shown faster, which --json says too
j = json.loads(open(d + ".stdout").read())
lo = (res.get("gain") or {}).get("ci95", [None])[0]
sets = bool(res["best"]["env"]) or bool(res.get("rules"))
assert j["shown_faster"] == (res["verdict"] == "recommended" and lo is not None and lo > 1.0), j
assert j["gain_ci95"] == (res["gain"].get("ci95") if res.get("gain") else None), j
if sets and lo is not None and lo <= 1.0:
    assert res["verdict"] == "not shown faster", res["verdict"]
PY
"$NT" export --format dotenv "$tmp/algo" >"$tmp/algo.env" 2>"$tmp/algo.err" ||
	fail "export --format dotenv: $(cat "$tmp/algo.err")"
grep -q "^NCCL_ALGO=Ring" "$tmp/algo.env" || fail "the export lacks the pin: $(cat "$tmp/algo.env")"
grep -q "^NCCL_DEBUG" "$tmp/algo.env" && fail "the export sets NCCL_DEBUG: $(cat "$tmp/algo.env")"
grep -q "NCCL_VERSION" "$tmp/algo.env" && fail "the export sets NCCL_VERSION: $(cat "$tmp/algo.env")"

# a measured best whose interval reaches 1.00x (this model and seed): verdict "not shown
# faster", shown_faster false in --json (a model's summary suggests no install anyway;
# show's wording: tests/workflows/test_recommended.sh)
env -u NCCL_ALGO -u NCCL_DEBUG "$NT" run --model pcie-2x4-islands --budget 20 --seed 5 \
	--out "$tmp/unproven" --json >"$tmp/unproven.stdout" 2>"$tmp/unproven.out" ||
	fail "unproven session: $(cat "$tmp/unproven.out")"
python3 - "$tmp/unproven" <<'PY' || fail "unproven session: verdict/json checks failed"
import json, sys
d = sys.argv[1]
res = json.load(open(d + "/results.json"))
j = json.loads(open(d + ".stdout").read())
assert res["verdict"] == "not shown faster", res["verdict"]
assert res["gain"]["ci95"][0] <= 1.0 < res["gain"]["ratio"], res["gain"]
assert j["verdict"] == "not shown faster" and j["shown_faster"] is False, j
assert j["gain_ci95"] == res["gain"]["ci95"], j
PY
grep -q "^use it:" "$tmp/unproven.out" && fail "unproven session suggests an install"

# resumed with a variable the journal does not pin: refused
env NCCL_SOCKET_IFNAME=eth0 "$NT" run --resume "$tmp/algo" >"$tmp/resume.out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "resume with a new NCCL_SOCKET_IFNAME: exit $rc"
grep -q "NCCL_SOCKET_IFNAME=eth0 is set in your environment, but the session ran without it" \
	"$tmp/resume.out" || fail "resume: $(cat "$tmp/resume.out")"

budget=12
# refused before any run: no journal, exit 2, the message says what to unset
for c in "NCCL_TUNER_PLUGIN=/old/build/plugin/libnccltune-tuner.so|unset NCCL_TUNER_PLUGIN NCCLTUNE_TUNER_TABLE" \
	"NCCLTUNE_TUNER_TABLE=/old/nccl-rules.conf|unset NCCL_TUNER_PLUGIN NCCLTUNE_TUNER_TABLE" \
	"NCCL_NET_PLUGIN=ofi|unset NCCL_NET_PLUGIN for the session" \
	"CUDA_LAUNCH_BLOCKING=1|unset CUDA_LAUNCH_BLOCKING" \
	"NCCL_BRAND_NEW_KNOB=1|not a variable nccltune knows"; do
	var=${c%%|*}
	says=${c#*|}
	name=${var%%=*}
	run "$tmp/r-$name" "$var" --
	rc=$?
	[ $rc -eq 2 ] || fail "$var: exit $rc, want 2: $(cat "$tmp/r-$name.out")"
	grep -qF "$says" "$tmp/r-$name.out" || fail "$var: $(cat "$tmp/r-$name.out")"
	grep -q "refused before any run" "$tmp/r-$name.out" || fail "$var: not before any run"
	[ -e "$tmp/r-$name/journal.jsonl" ] && fail "$var: a journal was written"
done

# loader and logging variables in a --try and in a space: the export's message, no run
for c in "NCCL_NET_PLUGIN=ofi|a loader variable" "NCCL_DEBUG=INFO|a logging variable" \
	"NCCL_TUNER_PLUGIN=/x.so|only to nccltune's own plugin"; do
	var=${c%%|*}
	run "$tmp/t-${var%%=*}" -- --try "NCCL_PROTO=LL $var"
	rc=$?
	[ $rc -eq 2 ] || fail "--try $var: exit $rc"
	grep -qF "${c#*|}" "$tmp/t-${var%%=*}.out" || fail "--try $var: $(cat "$tmp/t-${var%%=*}.out")"
	[ -e "$tmp/t-${var%%=*}/journal.jsonl" ] && fail "--try $var: a journal was written"
done
cat >"$tmp/space-param.json" <<'J'
{"schema": "nccltune-space/1", "params": {"NCCL_PROTO": {"values": ["LL", null]},
 "NCCL_DEBUG_FILE": {"values": ["/tmp/a", "/tmp/b"]}}}
J
cat >"$tmp/space-fixed.json" <<'J'
{"schema": "nccltune-space/1", "params": {"NCCL_PROTO": {"values": ["LL", null]}},
 "fixed": {"NCCL_DEBUG": "INFO"}}
J
for f in space-param space-fixed; do
	run "$tmp/$f" -- --space "$tmp/$f.json"
	rc=$?
	[ $rc -eq 2 ] || fail "$f: exit $rc: $(cat "$tmp/$f.out")"
	grep -q "never searched, tried or exported; refused before any run" "$tmp/$f.out" ||
		fail "$f: $(cat "$tmp/$f.out")"
	[ -e "$tmp/$f/journal.jsonl" ] && fail "$f: a journal was written"
done

[ $failures -eq 0 ] || exit 1
echo "ok"
