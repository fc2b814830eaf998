#!/bin/bash
# test_symmetric.sh - the server option as a search dimension (issue 18 item 4) and the
# step's figures (item 3), through the CLI with the model probe behind symm_wrapper.py:
# "server": {"symmetric": [false, true]} is validated strictly; a symmetric candidate runs
# the probe with --window symmetric and NCCL_CUMEM_ENABLE=1 (over --like's 0) and no
# NCCL_NVLS_ENABLE (over sglang's 0), the others without and with the profile's 0s; a failing symmetric run is learned (pruned); the
# winner's server option is in results.json, the summary, show, report.html and every
# export in words, per profile, with whether NCCL ran a symmetric kernel ("unknown"
# without a TUNING line), and never as a variable (sh sources env.sh, python imports the
# sitecustomize, json parses env.json); resume and two-level sessions carry it; the
# all-reduce part of the step comes from the kernel the probe measured.
# Usage: test_symmetric.sh NCCLTUNE SOURCE_ROOT [PART]: PART "search" runs cases 1-3 and
# 7, "step" cases 4-6, "twolevel" case 8 and the ablation, example and warm-start
# sessions; none, all of them (meson runs each part as a test of its own, so that none
# runs long on a loaded machine).
set -u
NT=$1
SRC=$2
PART=${3:-all}
case "$PART" in all|search|step|twolevel) ;; *) echo "FAIL: no part '$PART'"; exit 1 ;; esac
part() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }
MODEL="${NCCLTUNE_BUILD_ROOT:-.}/models/nccltune-model-probe"
[ -x "$MODEL" ] || { echo "FAIL: $MODEL is not built"; exit 1; }
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
WRAP="python3 $SRC/tests/session/symm_wrapper.py --model nvlink-h200-8gpu"
export WRAP_PROBE=$MODEL
failures=0
tmp=$(mktemp -d /tmp/nccltune-symm-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
want() { case "$2" in *"$3"*) ;; *) fail "$1: no '$3' in: $2" ;; esac; }
refuse() { case "$2" in *"$3"*) fail "$1: '$3' in: $2" ;; esac; }
space() { printf '{"schema": "nccltune-space/1", "params": {%s}%s}' "$1" "$2" >"$tmp/space.json"; }
SYM=', "server": {"symmetric": [false, true]}'
PROTO='"NCCL_PROTO": {"values": ["LL", "Simple", null]}'
unset NCCL_CUMEM_ENABLE

if part search; then
# 1. strict: each mistake names the key, exit 2, nothing run
bad() {   # bad PARAMS EXTRA NEEDLE
	space "$1" "$2"
	out=$("$NT" run --model nvlink-h200-8gpu --space "$tmp/space.json" --budget 2 --out "$tmp/bad" 2>&1)
	rc=$?
	[ $rc -eq 2 ] || fail "space $1 $2: exit $rc, want 2: $out"
	want "space $2" "$out" "$3"
	[ -e "$tmp/bad" ] && fail "space $2: a session folder was made"
	rm -rf "$tmp/bad"
}
bad "$PROTO" ', "server": {"symmetric": [1, 0]}' 'server.symmetric[0]'
bad "$PROTO" ', "server": {"symmetric": [false]}' 'server.symmetric: only false'
bad "$PROTO" ', "server": {"symmetric": [true, true]}' 'repeats symmetric[0]'
bad "$PROTO" ', "server": {"symmetric": []}' 'server.symmetric: expected a list of booleans'
bad "$PROTO" ', "server": {"symmetric": "true"}' 'server.symmetric: expected a list of booleans'
bad "$PROTO" ', "server": {"bogus": [true]}' 'server.bogus: unknown server option'
bad "$PROTO" ', "server": {}' 'server: empty'
bad "$PROTO" ', "server": [true]' 'server'
bad '"server.symmetric": {"values": [null, "yes"]}' '' "server.symmetric levels are null (off) and \"on\""
bad '"server.symmetric": {"values": [null, "on"]}' "$SYM" 'also searched in params'
out=$("$NT" run --model nvlink-h200-8gpu --try server.symmetric=on --budget 4 --out "$tmp/bad" 2>&1)
[ $? -eq 2 ] || fail "--try server.symmetric=on accepted: $out"
rm -rf "$tmp/bad"

# 2. --like sglang: what each run got; the winner's server option, in words, never a variable
space "$PROTO" "$SYM"
out=$(WRAP_LOG="$tmp/log1" "$NT" run --probe "$WRAP" --space "$tmp/space.json" --like sglang \
	--budget 20 --seed 1 --out "$tmp/s1" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "sglang session: exit $rc: $out"
python3 - "$tmp/log1" <<'PY' || fail "runs: window, cuMem and NVLS do not go together (log $tmp/log1)"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if '"--bytes"' in l]
sym = [r for r in runs if "--window" in r["args"]]
plain = [r for r in runs if "--window" not in r["args"]]
ok = sym and plain and all(r["cumem"] == "1" for r in sym) and all(r["cumem"] == "0" for r in plain)
# SGLang's NCCL_NVLS_ENABLE=0, left to NCCL's default (NVLS where the hardware has it) when
# symmetric memory is on, as SGLang's --enable-symm-mem turns NVLS on
ok = ok and all(r["nvls"] is None for r in sym) and all(r["nvls"] == "0" for r in plain)
ok = ok and not any(r["odd"] for r in runs)   # the option never reaches the environment
sys.exit(0 if ok else 1)
PY
best=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["best"].get("server")))' "$tmp/s1/results.json")
[ "$best" = '{"symmetric": true, "kernel": "symmetric"}' ] || fail "sglang: best.server is $best"
head -1 "$tmp/s1/journal.jsonl" | grep -q '"server.symmetric":{"values":\[null,"on"\]}' ||
	fail "the journal header's space lacks server.symmetric"
want "summary" "$out" "SGLang: --enable-symm-mem; needs NCCL_CUMEM_ENABLE=1"
want "summary" "$out" "NCCL ran a symmetric kernel"
refuse "summary (sglang)" "$out" "VLLM_USE_NCCL_SYMM_MEM"
sh_out=$("$NT" show "$tmp/s1" 2>&1)
want "show" "$sh_out" "SGLang: --enable-symm-mem; needs NCCL_CUMEM_ENABLE=1"
want "show" "$sh_out" "+symmetric memory (server)"
"$NT" report "$tmp/s1" >/dev/null 2>&1 || fail "report failed"
grep -q "SGLang&#58; --enable-symm-mem; needs NCCL_CUMEM_ENABLE=1" "$tmp/s1/report.html" ||
	fail "report.html lacks the server option"
ck=$("$NT" check "$tmp/s1" 2>&1)
want "check" "$ck" "symmetric memory on in the server"
for f in shell sitecustomize dotenv nccl-conf json nccl-tuner; do
	"$NT" export --format $f "$tmp/s1" >"$tmp/e.$f" 2>&1 || fail "export $f failed: $(cat "$tmp/e.$f")"
	grep -q -- "--enable-symm-mem" "$tmp/e.$f" || fail "export $f does not say what to turn on"
	grep -v '^ *#' "$tmp/e.$f" | grep -i -E "^[^\"]*(CUMEM|SYMM|server\.symmetric)[^\"]*=" &&
		fail "export $f sets symmetric memory or cuMem as a variable"
done
# the real consumers see no cuMem / symmetric variable
envs=$(env -i bash -c ". '$tmp/e.shell'; env" 2>&1)
refuse "sh sources env.sh" "$envs" "CUMEM"
refuse "sh sources env.sh" "$envs" "SYMM"
cp "$tmp/e.sitecustomize" "$tmp/sitecustomize.py"
py=$(env -i PYTHONPATH="$tmp" python3 -c 'import os; print(sorted(os.environ))' 2>&1)
refuse "python imports sitecustomize" "$py" "CUMEM"
refuse "python imports sitecustomize" "$py" "SYMM"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["env"]
sys.exit(0 if not any("CUMEM" in k or "SYMM" in k or "server" in k for k in e) and d["server"]["symmetric"] is True else 1)' "$tmp/e.json" ||
	fail "env.json: symmetric memory in env, or no server"

# 3. no profile: both servers' lines; vllm: its own line, and its runs get cuMem on too
out=$("$NT" run --probe "$WRAP" --space "$tmp/space.json" --budget 20 --seed 1 --out "$tmp/s2" 2>&1)
want "no profile" "$out" "SGLang: --enable-symm-mem"
want "no profile" "$out" "vLLM: VLLM_USE_NCCL_SYMM_MEM=1"
out=$(WRAP_LOG="$tmp/log3" "$NT" run --probe "$WRAP" --space "$tmp/space.json" --like vllm \
	--budget 20 --seed 1 --out "$tmp/s3" 2>&1)
want "vllm" "$out" "vLLM: VLLM_USE_NCCL_SYMM_MEM=1"
refuse "vllm" "$out" "--enable-symm-mem"
grep -- '--window' "$tmp/log3" | grep -v -q '"cumem": "1"' && fail "vllm: a symmetric run without NCCL_CUMEM_ENABLE=1"

fi

if part step; then
space "$PROTO" "$SYM"   # case 2's space
# 4. the user's NCCL_CUMEM_ENABLE=0 wins: every symmetric run fails at env and is learned
out=$(NCCL_CUMEM_ENABLE=0 "$NT" run --probe "$WRAP" --space "$tmp/space.json" --budget 20 \
	--seed 1 --out "$tmp/s4" 2>&1)
python3 - "$tmp/s4/results.json" <<'PY' || fail "cuMem off: symmetric failures not pruned or best symmetric: $out"
import json, sys
d = json.load(open(sys.argv[1]))
pr = [p for p in d.get("pruned", []) if p["when"].get("server.symmetric") == "on"]
sys.exit(0 if pr and "server" not in d["best"] else 1)
PY
"$NT" show "$tmp/s4" >/dev/null 2>&1 || fail "show refuses a pruned server.symmetric"

# 5. the measured kernel (30 us) is what the step's all-reduce part uses, not the asked 40
out=$(WRAP_KERNEL_US=30 "$NT" run --probe "$WRAP" --space "$tmp/space.json" --compute-us 40 \
	--budget 12 --seed 2 --out "$tmp/s5" 2>&1)
want "measured kernel" "$out" "(the step less 122 x 30.0 us, the kernel as"
want "measured kernel" "$out" "measured alone)"
want "show: measured kernel" "$("$NT" show "$tmp/s5" 2>&1)" "122 x 30.0 us, the kernel as measured alone"
python3 - "$tmp/s5/results.json" <<'PY' || fail "baseline/best.step: all-reduces are not the step less 122 x 30 us"
import json, sys
d = json.load(open(sys.argv[1]))
for b in (d["baseline"], d["best"]):
    st = b["step"]
    if st["kernel_us"] != 30 or abs(b["objective_us"] - 122 * 30 - st["allreduce_us"]) > 0.05 * b["objective_us"]:
        sys.exit(1)
PY
# an older results.json without "step": the asked kernel, labelled
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d[k].pop("step", None) for k in ("baseline","best")]; json.dump(d, open(sys.argv[1], "w"))' "$tmp/s5/results.json"
want "show: asked kernel" "$("$NT" show "$tmp/s5" 2>&1)" "122 x 40.0 us, the kernel as asked"

# 6. no TUNING line (one rank): "unknown"
out=$(WRAP_NO_DECISIONS=1 "$NT" run --probe "$WRAP" --space "$tmp/space.json" --budget 20 \
	--seed 1 --out "$tmp/s6" 2>&1)
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["server"]["kernel"])' "$tmp/s6/results.json")" = unknown ] ||
	fail "no decisions: kernel is not unknown"
want "unknown kernel" "$out" "whether NCCL ran a symmetric kernel is unknown"

fi

if part search; then
# 7. resume: a journal cut after 8 runs, resumed, ends with the same best.server
mkdir "$tmp/s7" && head -9 "$tmp/s1/journal.jsonl" >"$tmp/s7/journal.jsonl"
out=$(WRAP_LOG="$tmp/log7" "$NT" run --resume "$tmp/s7" 2>&1)
[ $? -eq 0 ] || fail "resume: $out"
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["server"]["symmetric"])' "$tmp/s7/results.json")" = True ] ||
	fail "resume: best.server lost"
[ -s "$tmp/log7" ] || fail "resume: nothing ran after the cut"

fi

if part twolevel; then
# 8. two-level: per-size rules with the server option in the outer space
printf '{"schema": "nccltune-space/1", "per_size": {"proto": {"values": ["LL", "Simple", null]}}, "params": {"NCCL_NTHREADS": {"values": [256, null]}}%s}' "$SYM" >"$tmp/ps.json"
out=$(WRAP_LOG="$tmp/log8" "$NT" run --probe "$WRAP" --space "$tmp/ps.json" --like sglang \
	--budget 24 --seed 1 --out "$tmp/s8" 2>&1)
[ $? -eq 0 ] || fail "two-level: $out"
head -1 "$tmp/s8/journal.jsonl" | grep -q '"two_level":true' || fail "two-level: not two-level"
grep -- '--sweep' "$tmp/log8" | grep -q -- '--window' || fail "two-level: no sweep ran with symmetric windows"
grep -- '--sweep' "$tmp/log8" | grep -- '--window' | grep -v -q '"cumem": "1"' &&
	fail "two-level: a symmetric sweep without NCCL_CUMEM_ENABLE=1"

# the ablation drops a server option that changes nothing: [true] alone has no off
# level, so the ablation leaves it out (unset) and removing it is shown harmless (within
# 1.01x) on the PCIe model at a tenth of its noise (at its full 3% spread two rounds
# cannot show 1.01x: the option would be kept, "not shown harmless"); then nothing
# (results.json, exports) says to turn it on
printf '{"schema": "nccltune-space/1", "params": {"NCCL_PROTO": {"values": ["LL", "Simple", null]}, "NCCL_NTHREADS": {"values": [64, 128, 256, 512, null]}}, "server": {"symmetric": [true]}}' \
	>"$tmp/sym1.json"
out=$("$NT" run --probe "$MODEL --model pcie-gen5-8gpu --noise 0.1 --seed 1" \
	--space "$tmp/sym1.json" --budget 30 --seed 1 --out "$tmp/sym1" 2>&1)
[ $? -eq 0 ] || fail "dropped server option: exit: $out"
want "dropped server option" "$out" "server.symmetric=on: dropped"
python3 - "$tmp/sym1" <<'PYEOF' || fail "dropped server option: $out"
import json, sys
d = sys.argv[1]
res = json.load(open(d + "/results.json"))
assert res["best"].get("server") is None, res["best"]
for name in ("env.sh", "nccl.env", "sitecustomize.py"):
    text = open(d + "/exports/" + name).read()
    assert "--enable-symm-mem" not in text and "symmetric memory" not in text, (name, text)
PYEOF

# the example space (README's examples table): two-level on the 2-GPU NVLink model,
# where symmetric kernels win; the best carries the server option in words, not a variable
out=$("$NT" run --model h200-nvlink-2gpu --space "$SRC/examples/space-nvlink-symmetric.json" \
	--like sglang --budget 30 --seed 1 --out "$tmp/example" 2>&1)
[ $? -eq 0 ] || fail "example space: exit: $out"
python3 - "$tmp/example" <<'PYEOF' || fail "example space: $out"
import json, sys
d = sys.argv[1]
res = json.load(open(d + "/results.json"))
assert json.loads(open(d + "/journal.jsonl").readline())["schema"] == "nccltune-journal/2"
assert (res["best"].get("server") or {}).get("symmetric") is True, res["best"]
assert "NCCL_CUMEM_ENABLE" not in res["best"]["env"], res["best"]["env"]
PYEOF

# --warm-start from that session: the same space maps its runs by their levels (the
# server option and the rules with them); another space cannot (an env does not say
# which option or rule a run had), so nothing of it is reused
out=$("$NT" run --model h200-nvlink-2gpu --space "$SRC/examples/space-nvlink-symmetric.json" \
	--like sglang --budget 20 --seed 2 --warm-start "$tmp/example" --out "$tmp/warm-same" 2>&1)
[ $? -eq 0 ] || fail "warm start, same space: exit: $out"
python3 - "$tmp/warm-same" <<'PYEOF' || fail "warm start, same space: $out"
import json, sys
h = json.loads(open(sys.argv[1] + "/journal.jsonl").readline())
names = list(h["space"]["params"])
d = names.index("server.symmetric")
on = h["space"]["params"]["server.symmetric"]["values"].index("on")
configs = h["warm_start"]["configs"]
assert configs and any(c[d] == on for c in configs), (names, configs)
PYEOF
out=$("$NT" run --model h200-nvlink-2gpu --space "$SRC/examples/space-nvlink-per-size.json" \
	--budget 20 --seed 2 --warm-start "$tmp/example" --out "$tmp/warm-other" 2>&1)
[ $? -eq 0 ] || fail "warm start, other space: exit: $out"
want "warm start, other space" "$out" "so none of its"
[ "$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["warm_start"]["configs"])' "$tmp/warm-other/journal.jsonl")" = "[]" ] ||
	fail "warm start, other space: configurations reused"

fi

[ $failures -eq 0 ] && echo "ok" || echo "$failures failure(s)"
[ $failures -eq 0 ]
