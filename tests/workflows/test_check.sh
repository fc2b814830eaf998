#!/bin/sh
# test_check.sh - nccltune_check against a fake probe that prints a given fingerprint:
# unchanged (0, one line), changed (3, a line per difference), probe failures (1), bad
# session folders (2); the probe recorded in the journal; the model probe when built.
set -eu
TOOL=$1
DATA=$NCCLTUNE_SOURCE_ROOT/tests/workflows/data
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat > "$T/probe" <<'EOF2'
#!/bin/sh
# A fake probe: `probe FILE --fingerprint` prints FILE.
for a; do last=$a; done
[ "$last" = --fingerprint ] || { echo "expected --fingerprint last, got $*" >&2; exit 2; }
cat "$1"
EOF2
chmod +x "$T/probe"
# The fingerprint saved in the measured fixture, and edited copies of it.
python3 - "$DATA/measured/results.json" "$T" <<'EOF2'
import json, sys
fp = json.load(open(sys.argv[1]))["fingerprint"]
out = sys.argv[2]
def save(name, f):
    json.dump(f, open(out + "/" + name, "w"))
save("same.json", fp)
f = dict(fp, host="other-host", kernel="6.9.0"); save("host.json", f)
f = json.loads(json.dumps(fp)); f["driver"] = "590.10"; f["nccl_version"] = "2.29.1"
f["gpus"][3]["bus_id"] = "00000000:99:00.0"
f["topology"][0][5] = f["topology"][5][0] = "PIX"
save("changed.json", f)
f = json.loads(json.dumps(fp)); f["gpus"] = f["gpus"][:7]; f["gpu_count"] = 7
f["topology"] = [r[:7] for r in f["topology"][:7]]
save("lost-gpu.json", f)
f = dict(fp, source="model", model="pcie-gen5-8gpu"); save("model.json", f)
f = dict(fp, gpu_count=0, gpus=[], topology=[]); save("no-gpu.json", f)
f = dict(fp); del f["gpu_count"]; f["gpus"] = []; f["topology"] = []; save("no-gpu-list.json", f)
EOF2

out=$("$TOOL" check "$DATA/measured" "$T/probe $T/same.json") || fail "same: status $?"
[ "$out" = "unchanged: 8 x NVIDIA RTX PRO 6000 Blackwell Server Edition, driver 580.159.04, CUDA 13.0, NCCL 2.28.9, host fixture-box" ] ||
	fail "same: $out"
# host and kernel are shown, not compared
out=$("$TOOL" check "$DATA/measured" "$T/probe $T/host.json") || fail "host: status $?"
case $out in "unchanged: "*"host other-host") ;; *) fail "host: $out" ;; esac

rc=0
"$TOOL" check "$DATA/measured" "$T/probe $T/changed.json" > "$T/out" || rc=$?
[ "$rc" = 3 ] || fail "changed: status $rc"
cat > "$T/want" <<EOF2
changed: 4 differences from the fingerprint saved in $DATA/measured
driver: 580.159.04 -> 590.10
nccl_version: 2.28.9 -> 2.29.1
gpu 3 bus_id: 00000000:48:00.0 -> 00000000:99:00.0
topology GPU0-GPU5: SYS -> PIX
EOF2
diff "$T/want" "$T/out" || fail "changed: output"

rc=0
"$TOOL" check "$DATA/measured" "$T/probe $T/lost-gpu.json" > "$T/out" || rc=$?
[ "$rc" = 3 ] || fail "lost gpu: status $rc"
grep -qx 'gpu_count: 8 -> 7' "$T/out" || fail "lost gpu: $(cat "$T/out")"
grep -qx 'gpu 7: NVIDIA RTX PRO 6000 Blackwell Server Edition -> (none)' "$T/out" || fail "lost gpu 7"
grep -qx 'topology: 8 x 8 -> 7 x 7 GPUs' "$T/out" || fail "lost gpu topology"
rc=0
"$TOOL" check "$DATA/measured" "$T/probe $T/model.json" > "$T/out" || rc=$?
[ "$rc" = 3 ] || fail "model: status $rc"
grep -qx 'source: measured -> model' "$T/out" || fail "model: $(cat "$T/out")"

# The probe sees no GPU where the session had 8 (a driver error, a device gone): it
# cannot measure - 1, not "changed" (3), which would start a re-tune of nothing.
for f in no-gpu no-gpu-list; do
	rc=0
	"$TOOL" check "$DATA/measured" "$T/probe $T/$f.json" > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" = 1 ] || fail "$f: status $rc"
	grep -q "cannot measure: the probe sees no GPU, and the session tuned 8" "$T/err" ||
		fail "$f: $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "$f: printed a verdict: $(cat "$T/out")"
done

# The probe cannot be run or says nothing useful: 1.
for probe in "$T/no-such-probe" "false" "$T/probe $T/missing.json" "echo not-json" \
             "sh -c 'echo {} ; exit 0'" "sh -c 'kill -9 \$\$'"; do
	rc=0
	"$TOOL" check "$DATA/measured" "$probe" > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" = 1 ] || fail "probe '$probe': status $rc"
	grep -q "cannot measure: " "$T/err" || fail "probe '$probe': message $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "probe '$probe': printed a verdict"
done
grep -q "signal 9" "$T/err" || fail "killed probe message: $(cat "$T/err")"

# Bad session folders: 2.
mkdir "$T/empty"
printf '{"schema": "nccltune-result/1", ' > "$T/empty/results.json"
for dir in "$T/no-such-dir" "$T/empty" "$DATA/hostile/fp-control-char.json"; do
	rc=0
	"$TOOL" check "$dir" "$T/probe $T/same.json" > /dev/null 2> "$T/err" || rc=$?
	[ "$rc" = 2 ] || fail "bad folder $dir: status $rc"
done
# a result without a saved fingerprint and no journal: nothing to compare with
rc=0
"$TOOL" check "$DATA/hostile/accepted.json" "$T/probe $T/same.json" >/dev/null 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "accepted (hand-written fingerprint) status $rc"
rc=0
"$TOOL" check "$DATA/noconfig/results.json" >/dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "no probe recorded: status $rc"
grep -q 'pass --probe CMD or --model NAME' "$T/err" || fail "no probe message $(cat "$T/err")"

# Without --probe: the probe recorded in the journal header. Also a session still
# running (journal, no results.json) can be checked.
mkdir "$T/sess"
python3 - "$DATA/measured/journal.jsonl" "$T/sess/journal.jsonl" "$T" <<'EOF2'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
h = json.loads(lines[0]); h["probe"] = [sys.argv[3] + "/probe", sys.argv[3] + "/same.json"]
open(sys.argv[2], "w").write("\n".join([json.dumps(h)] + lines[1:]) + "\n")
EOF2
out=$("$TOOL" check "$T/sess") || fail "journal probe: status $?"
case $out in "unchanged: "*) ;; *) fail "journal probe: $out" ;; esac

# The model probe, once built: its own fingerprint compared with a saved copy of itself.
MP=$NCCLTUNE_BUILD_ROOT/models/nccltune-model-probe
if [ -x "$MP" ] && "$MP" --model pcie-gen5-8gpu --fingerprint > "$T/mp.json" 2>/dev/null; then
	mkdir "$T/msess"
	python3 - "$DATA/model/results.json" "$T/mp.json" "$T/msess/results.json" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1])); r["fingerprint"] = json.load(open(sys.argv[2]))
json.dump(r, open(sys.argv[3], "w"))
EOF2
	out=$("$TOOL" check "$T/msess" "$MP --model pcie-gen5-8gpu") || fail "model probe: status $?"
	case $out in "unchanged: "*) ;; *) fail "model probe: $out" ;; esac
	# the session folder moved: its recorded probe path is gone, the probe is found here
	python3 - "$DATA/model/journal.jsonl" "$T/msess/journal.jsonl" <<'EOF3'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
h = json.loads(lines[0]); h["probe"] = ["/gone/bin/nccltune-model-probe", "--model", "pcie-gen5-8gpu"]
open(sys.argv[2], "w").write("\n".join([json.dumps(h)] + lines[1:]) + "\n")
EOF3
	out=$(NCCLTUNE_MODEL_PROBE=$MP "$TOOL" check "$T/msess") || fail "moved session: status $?"
	case $out in "unchanged: "*) ;; *) fail "moved session: $out" ;; esac
	rc=0
	"$TOOL" check "$DATA/measured" "$MP --model pcie-gen5-8gpu" > "$T/out" || rc=$?
	[ "$rc" = 3 ] || fail "model probe vs measured: status $rc"
	grep -qx 'source: measured -> model' "$T/out" || fail "model probe vs measured: $(cat "$T/out")"
else
	echo "note: model probe not built or without --fingerprint; that part skipped"
fi
echo "check: ok"
