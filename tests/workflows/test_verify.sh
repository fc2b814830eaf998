#!/bin/sh
# test_verify.sh - `nccltune verify` on CPU against real installs (a venv made with
# python3 -m venv --without-pip, the pth install of data/rules, the plugin of this
# build): a working install (exit 0, the plugin's own lines: ABI, table, rule count,
# rules applied, the variables from the interpreter's start-up); a moved build tree (the
# plugin named by the install is gone: exit 5, "plugin not found"); a missing table and
# a corrupt one (exit 5, "table unreadable"); a variable that differs from the session
# (exit 5); a wrong interpreter (exit 1); an env file (docker --env-file's NAME=VALUE);
# without a GPU every run says NCCL was not started under "not checked".
#   usage: test_verify.sh NCCLTUNE PLUGIN_SO
set -eu
NT=$1
SO=$2
DATA=$NCCLTUNE_SOURCE_ROOT/tests/workflows/data
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd -P)
fail() { echo "FAIL: $*" >&2; cat "$T/out" >&2 2>/dev/null; exit 1; }
export NCCLTUNE_PLUGIN_LOAD="$NCCLTUNE_BUILD_ROOT/models/nccltune-plugin-load"
unset NCCL_TUNER_PLUGIN NCCLTUNE_TUNER_TABLE NCCL_CONF_FILE NCCL_DEBUG NCCL_PROTO NCCL_ALGO
export HOME="$T/home"
mkdir -p "$HOME" "$T/tree"
cp -R "$DATA/rules" "$T/sess"
# a build tree of our own that can be moved away
cp "$SO" "$T/tree/libnccl-tuner-nccltune.so"
export NCCLTUNE_PLUGIN="$T/tree/libnccl-tuner-nccltune.so"
python3 -m venv --without-pip "$T/venv" || { echo "no venv module: skipped"; exit 77; }
V=$T/venv/bin/python
SITE=$("$V" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$NT" export --install --python "$V" "$T/sess" >/dev/null 2>&1 || fail "install"
# verify runs NCCL-less here: a GPU would make it start NCCL through torch (not here)
verify() { rc=0; "$NT" verify "$@" >"$T/out" 2>&1 || rc=$?; }

# 1. a working install
verify --python "$V" "$T/sess"
[ $rc = 0 ] || fail "working install: exit $rc"
grep -q "tuner plugin: $SITE/libnccl-tuner-nccltune.so loaded through ncclTunerPlugin_v6 (ABI v6), named \"nccltune\"" "$T/out" ||
	fail "working install: no plugin line"
grep -q "^table: $SITE/nccltune-tuner.table, 2 rule(s)" "$T/out" || fail "working install: no table line"
grep -q "^rules applied: 43008 B -> Tree/Simple, 2 CTAs (rule 1)" "$T/out" || fail "no applied rule"
grep -q "^  NCCL_BUFFSIZE=131072  (the interpreter's start-up" "$T/out" || fail "no origin of a variable"
grep -q "^matches the session: the table holds its 2 per-size rule(s)" "$T/out" || fail "table not compared"
grep -q "^  NCCL was not started" "$T/out" || fail "does not say NCCL was not started"
grep -q "^verdict: ok" "$T/out" || fail "verdict"

# 2. a variable of the server's own environment that differs from what was measured
NCCL_BUFFSIZE=4194304 verify --python "$V" "$T/sess"
[ $rc = 5 ] || fail "differing variable: exit $rc"
grep -q "^FAIL: NCCL_BUFFSIZE=4194304 in the server's environment (the environment); the session measured NCCL_BUFFSIZE=131072" "$T/out" ||
	fail "differing variable not named"
NCCL_PROTO=LL verify --python "$V" "$T/sess"
[ $rc = 5 ] && grep -q "^FAIL: NCCL_PROTO=LL .*overrides the per-size rules" "$T/out" ||
	fail "an inherited NCCL_PROTO over per-size rules passed"

# 3. a missing table, then a corrupt one
mv "$SITE/nccltune-tuner.table" "$T/table.saved"
verify --python "$V" "$T/sess"
[ $rc = 5 ] && grep -q "^FAIL: table unreadable: .*nccltune-tuner.table.*table ignored" "$T/out" ||
	fail "missing table: exit $rc"
printf 'nccltune-tuner/1\nallreduce * * 43008 43008 sideways ll 2 0\n' >"$SITE/nccltune-tuner.table"
verify --python "$V" "$T/sess"
[ $rc = 5 ] && grep -q "^FAIL: table unreadable" "$T/out" || fail "corrupt table: exit $rc"
mv "$T/table.saved" "$SITE/nccltune-tuner.table"

# 4. a moved build tree: the install names its own copy of the plugin, and still works;
# that copy gone: plugin not found (an env file naming the tree: section 6)
mv "$T/tree" "$T/tree.moved"
verify --python "$V" "$T/sess"
[ $rc = 0 ] || fail "moved build tree: the install broke: exit $rc $(cat "$T/out")"
mv "$SITE/libnccl-tuner-nccltune.so" "$T/copy.saved"
verify --python "$V" "$T/sess"
[ $rc = 5 ] && grep -q "^FAIL: plugin not found: NCCL_TUNER_PLUGIN=$SITE/libnccl-tuner-nccltune.so (the interpreter's start-up" "$T/out" ||
	fail "the install's plugin copy gone: exit $rc"
mv "$T/copy.saved" "$SITE/libnccl-tuner-nccltune.so"
mv "$T/tree.moved" "$T/tree"

# 5. a wrong interpreter: not one at all, and a program that is not Python
verify --python "$T/nope/python" "$T/sess"
[ $rc = 1 ] && grep -q "cannot run it" "$T/out" || fail "missing interpreter: exit $rc"
verify --python /bin/true "$T/sess"
[ $rc = 1 ] && grep -q "without answering" "$T/out" || fail "/bin/true as the interpreter: exit $rc"
# the interpreter the venv was made from has no install: no plugin at all
verify --python python3 "$T/sess"
[ $rc = 5 ] && grep -q "^FAIL: plugin not found: NCCL_TUNER_PLUGIN is not set" "$T/out" ||
	fail "the venv's base interpreter: exit $rc"

# 6. an env file, as docker --env-file reads it
mkdir -p "$T/sess/exports"
"$NT" export --format nccl-tuner "$T/sess" >"$T/sess/exports/nccl-tuner.table"
"$NT" export --format dotenv "$T/sess" >"$T/nccl.env" || fail "dotenv export"
verify --env-file "$T/nccl.env" "$T/sess"
[ $rc = 0 ] && grep -q "^  NCCL_BUFFSIZE=131072  (env file $T/nccl.env)" "$T/out" ||
	fail "env file: exit $rc"
# the env file names the build tree's plugin: a moved tree breaks it, and verify says so
mv "$T/tree" "$T/tree.moved"
verify --env-file "$T/nccl.env" "$T/sess"
[ $rc = 5 ] && grep -q "^FAIL: plugin not found: NCCL_TUNER_PLUGIN=$T/tree/libnccl-tuner-nccltune.so (env file" "$T/out" ||
	fail "env file, moved build tree: exit $rc $(cat "$T/out")"
mv "$T/tree.moved" "$T/tree"
printf 'NCCL BUFFSIZE=1\n' >"$T/bad.env"
verify --env-file "$T/bad.env"
[ $rc = 2 ] && grep -q "bad.env:1: not NAME=VALUE" "$T/out" || fail "bad env file: exit $rc"
# without the env file, nothing is deployed
verify "$T/sess"
[ $rc = 5 ] || fail "no env file: exit $rc"
# ~/.nccl.conf: NCCL sets what the environment leaves unset
grep -v '^#' "$T/nccl.env" >"$HOME/.nccl.conf"
verify "$T/sess"
[ $rc = 0 ] && grep -q "^  NCCL_BUFFSIZE=131072  ($HOME/.nccl.conf (NCCL's configuration file))" "$T/out" ||
	fail "nccl.conf: exit $rc"
echo "ok"
