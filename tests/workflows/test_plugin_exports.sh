#!/bin/sh
# test_plugin_exports.sh - a result with per-size rules (data/rules: best.rules, as the
# per-size tuning writes it) deployed through nccltune's real tuner plugin: the session's
# table (nccl-tuner export) and every env-style export naming the built plugin and that
# table; then installed (pth into a real venv, sitecustomize, nccl-conf), and what each
# consumer ends up with - python3's environment, NCCL's own conf reader - is fed to the
# plugin by plugin_apply (ABI v5, as NCCL calls it): the rules apply (43008 B: Tree/Simple
# on 2 CTAs; 1 MiB: the cheapest with Simple), an unruled size stays NCCL's. Uninstall
# removes the table. A plugin path that is not nccltune's plugin is refused.
set -eu
TOOL=$1
APPLY=$2
CONF_ENV=$3
PLUGIN=$(readlink -f "$4")
FAKE_PLUGIN=$(readlink -f "$5")
DATA=$NCCLTUNE_SOURCE_ROOT/tests/workflows/data
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
PY=$(python3 -c 'import sys; print(sys.executable)')
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd -P)
fail() { echo "FAIL: $*" >&2; exit 1; }
cat > "$T/want" <<EOF2
43008 tree simple 2
1048576 ring simple 0
8192 ring ll 0
EOF2
# what NCCL would run with the plugin and table a consumer ended up with
applies() {
	"$APPLY" "$1" "$2" 8 43008 1048576 8192 > "$T/got" || fail "$3: plugin_apply"
	diff "$T/want" "$T/got" || fail "$3: the rules did not apply as exported"
}
vars='import os; print(os.environ.get("NCCL_TUNER_PLUGIN", "")); print(os.environ.get("NCCLTUNE_TUNER_TABLE", "")); print(os.environ.get("NCCL_ALGO"), os.environ.get("NCCL_NTHREADS"))'

S=$T/sess
mkdir -p "$S/exports"
cp "$DATA/rules/results.json" "$S/"
"$TOOL" export nccl-tuner "$S" > "$S/exports/nccl-tuner.table" || fail "the table"
applies "$PLUGIN" "$S/exports/nccl-tuner.table" "the session's table"
# a session that measured on 4 ranks (--gpus 4) of this 8-GPU machine (its journal's
# reports say so; the fingerprint says 8): the rules name nranks 4, apply to a 4-rank
# communicator and to no 8-rank one. Without a journal (above): '*'.
grep -q '^allreduce  *\*  ' "$S/exports/nccl-tuner.table" || fail "no journal: not '*'"
S4=$T/sess4
mkdir -p "$S4"
cp "$DATA/rules/results.json" "$S4/"
python3 - "$DATA/measured/journal.jsonl" "$S4/journal.jsonl" <<'EOF2'
import json, sys
head = open(sys.argv[1]).readline()
run = {"type": "run", "run": 1, "phase": "baseline", "point": None, "env": {}, "outcome": "ok",
       "objective_us": 24400.0, "wall_s": 3.1, "exit_status": 0, "signal": 0, "error": "",
       "stderr_tail": "", "report": {"nranks": 4}}
open(sys.argv[2], "w").write(head + json.dumps(run) + "\n")
EOF2
"$TOOL" export nccl-tuner "$S4" > "$T/t4" || fail "the 4-rank table"
[ "$(grep -c '^allreduce  *4  ' "$T/t4")" = 2 ] || fail "4 ranks measured: $(cat "$T/t4")"
"$APPLY" "$PLUGIN" "$T/t4" 4 43008 1048576 8192 > "$T/got" || fail "plugin_apply at 4 ranks"
diff "$T/want" "$T/got" || fail "the 4-rank table does not apply at nranks 4"
printf '43008 ring ll 0\n1048576 ring ll 0\n8192 ring ll 0\n' > "$T/want8"
"$APPLY" "$PLUGIN" "$T/t4" 8 43008 1048576 8192 > "$T/got" || fail "plugin_apply at 8 ranks"
diff "$T/want8" "$T/got" || fail "the 4-rank table applies at nranks 8"
# the env-style exports name the built plugin (and say it is the build tree's) and the table
"$TOOL" export shell "$S" > "$T/env.sh" || fail "shell export"
grep -qx "export NCCL_TUNER_PLUGIN='$PLUGIN'" "$T/env.sh" || fail "env.sh: plugin: $(cat "$T/env.sh")"
grep -qx "export NCCLTUNE_TUNER_TABLE='$S/exports/nccl-tuner.table'" "$T/env.sh" || fail "env.sh: table"
grep -q "the plugin is the build tree's, not installed" "$T/env.sh" || fail "env.sh: no build-tree note"
grep -q '^export NCCL_ALGO' "$T/env.sh" && fail "env.sh sets NCCL_ALGO next to the plugin"
out=$(env -i PATH="$PATH" sh -c '. "$1" && exec python3 -c "$2"' sh "$T/env.sh" "$vars")
set -- $out
applies "$1" "$2" "sh . env.sh"
[ "$3 $4" = "None 64" ] || fail "env.sh: NCCL_ALGO/NTHREADS: $3 $4"
for f in sitecustomize dotenv nccl-conf json; do
	"$TOOL" export $f "$S" | grep -q "$S/exports/nccl-tuner.table" || fail "$f does not name the table"
done
# a table that is not this result's is refused
echo "nccltune-tuner/1" > "$S/exports/nccl-tuner.table"
rc=0
"$TOOL" export shell "$S" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "is not this result's" "$T/err" || fail "a foreign table: $rc $(cat "$T/err")"
"$TOOL" export nccl-tuner "$S" > "$S/exports/nccl-tuner.table"

# pth into a real venv: the module names the plugin and the table written next to it
"$PY" -m venv --without-pip "$T/venv" || { echo "no venv module: skipped"; exit 77; }
V=$T/venv/bin/python
SITE=$("$V" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$TOOL" inst pth "$S" - "$V" > /dev/null 2> "$T/notes" || fail "pth install: $(cat "$T/notes")"
grep -q "the per-size rules for nccltune's tuner plugin: $SITE/nccltune-tuner.table" "$T/notes" ||
	fail "pth notes: $(cat "$T/notes")"
out=$(env -i PATH="$PATH" "$V" -c "$vars")
set -- $out
[ "$1" = "$PLUGIN" ] && [ "$2" = "$SITE/nccltune-tuner.table" ] || fail "pth: python saw $out"
applies "$1" "$2" "pth install"
# check: the machine unchanged and what is installed still loads; a table or a plugin
# that went away is "cannot use" (1), with what to reinstall
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["fingerprint"]))' \
	"$S/results.json" > "$T/fp.json"
printf '#!/bin/sh\ncat "%s"\n' "$T/fp.json" > "$T/probe"
chmod +x "$T/probe"
"$TOOL" check "$S" "$T/probe" > "$T/out" || fail "check after install: $(cat "$T/out")"
grep -q "^unchanged: " "$T/out" || fail "check: $(cat "$T/out")"
python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["installs"]
assert [(i["format"], i["file"], i["table"]) for i in r] == [("pth", sys.argv[2] + "/nccltune.pth", sys.argv[2] + "/nccltune-tuner.table")], r' \
	"$S/installed.json" "$SITE" || fail "installed.json"
mv "$SITE/nccltune-tuner.table" "$T/table.away"
rc=0
"$TOOL" check "$S" "$T/probe" > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] || fail "check, table gone: exit $rc"
grep -q "the environment installed into $SITE/nccltune.pth no longer works: .*nccltune-tuner.table" "$T/err" ||
	fail "check, table gone: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "check, table gone: a verdict"
mv "$T/table.away" "$SITE/nccltune-tuner.table"
cp "$PLUGIN" "$T/copy.so"
NCCLTUNE_PLUGIN=$T/copy.so "$TOOL" inst pth "$S" - "$V" > /dev/null 2>&1 || fail "install with a copied plugin"
grep -q "NCCL_TUNER_PLUGIN\", \"$T/copy.so" "$SITE/_nccltune_env.py" || fail "the module does not name the copy"
"$TOOL" check "$S" "$T/probe" > /dev/null || fail "check with the copied plugin"
rm "$T/copy.so"
rc=0
"$TOOL" check "$S" "$T/probe" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "copy.so" "$T/err" || fail "check, plugin gone: $rc $(cat "$T/err")"
"$TOOL" inst pth "$S" - "$V" > /dev/null 2>&1 || fail "reinstall"
"$TOOL" check "$S" "$T/probe" > /dev/null || fail "check after reinstall"
"$TOOL" uninst pth - "$V" > /dev/null 2>&1 || fail "pth uninstall"
"$TOOL" check "$S" "$T/probe" > /dev/null || fail "check after uninstall (nothing installed to check)"
[ ! -e "$SITE/nccltune-tuner.table" ] || fail "pth uninstall left the table"

# sitecustomize: the table next to the file
mkdir "$T/site"
"$TOOL" inst sitecustomize "$S" "$T/site/sitecustomize.py" - > /dev/null 2>&1 || fail "sitecustomize install"
out=$(env -i PATH="$PATH" PYTHONPATH="$T/site" python3 -c "$vars")
set -- $out
[ "$2" = "$T/site/sitecustomize.py.nccltune-tuner.table" ] || fail "sitecustomize table: $2"
applies "$1" "$2" "sitecustomize install"
"$TOOL" uninst sitecustomize "$T/site/sitecustomize.py" - > /dev/null 2>&1 || fail "sitecustomize uninstall"
[ ! -e "$T/site/sitecustomize.py.nccltune-tuner.table" ] || fail "sitecustomize uninstall left the table"

# nccl-conf: NCCL itself reads the file; what it set goes to the plugin
"$TOOL" inst nccl-conf "$S" "$T/nccl.conf" - > /dev/null 2>&1 || fail "nccl-conf install"
rc=0
env -i PATH="$PATH" HOME="$T" NCCL_CONF_FILE="$T/nccl.conf" "$CONF_ENV" > "$T/nccl.env" 2>/dev/null || rc=$?
if [ "$rc" = 77 ]; then
	echo "note: no libnccl.so.2: NCCL's reader skipped"
else
	[ "$rc" = 0 ] || fail "NCCL's reader: exit $rc"
	p=$(sed -n 's/^NCCL_TUNER_PLUGIN=//p' "$T/nccl.env")
	# NCCLTUNE_TUNER_TABLE is not NCCL_*: read it from the block as NCCL would
	tb=$(sed -n 's/^NCCLTUNE_TUNER_TABLE=//p' "$T/nccl.conf")
	[ "$tb" = "$T/nccl.conf.nccltune-tuner.table" ] || fail "nccl-conf table: $tb"
	applies "$p" "$tb" "nccl-conf install"
fi

# a plugin path that is not nccltune's plugin is never exported
# (a missing file, a program that is no library, a library without the entry point, one
# whose entry point answers another version)
LIBM=$(python3 -c 'import ctypes, ctypes.util; n = ctypes.util.find_library("m"); print(n or "")')
LIBM=$(ldconfig -p 2>/dev/null | sed -n "s|.*$LIBM => ||p" | head -n 1)
for bad in "$T/missing.so" /bin/sh ${LIBM:+"$LIBM"}; do
	rc=0
	NCCLTUNE_PLUGIN=$bad "$TOOL" export shell "$S" > /dev/null 2> "$T/err" || rc=$?
	[ "$rc" = 1 ] || fail "NCCLTUNE_PLUGIN=$bad: exit $rc"
	grep -q '\$NCCLTUNE_PLUGIN: ' "$T/err" || fail "NCCLTUNE_PLUGIN=$bad: $(cat "$T/err")"
done
rc=0
NCCLTUNE_PLUGIN=$FAKE_PLUGIN "$TOOL" export shell "$S" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "control version 2, not 1" "$T/err" || fail "fake plugin: $rc $(cat "$T/err")"
echo "plugin exports: ok"
