#!/bin/sh
# test_install.sh - nccltune_install: merge into a sitecustomize.py that has other content
# and an older nccltune block, twice; then Python itself shows that exactly the tuned
# variables are set and a pinned one is left alone. Also: new file, symlink, broken
# markers, and finding the target through the interpreter.
set -eu
TOOL=$1
DATA=$NCCLTUNE_SOURCE_ROOT/tests/workflows/data
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
PY=$(python3 -c 'import sys; print(sys.executable)')
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd -P)
# the fixtures, copied: an install from a session folder records itself there
cp -R "$DATA" "$T/data"
DATA=$T/data
fail() { echo "FAIL: $*" >&2; exit 1; }

# What Ubuntu ships (the apport hook), an older nccltune block, and code after it.
cat > "$T/sitecustomize.py" <<'PYEOF'
# install the apport exception handler if available
try:
    import apport_python_hook
except ImportError:
    pass
else:
    apport_python_hook.install()

# >>> nccltune >>>
# an older block
import os as _os
for _k, _v in [("NCCL_PROTO", "Simple"), ("NCCL_ALGO", "Tree")]:
    if _k not in _os.environ: _os.environ[_k] = _v
# <<< nccltune <<<
X_AFTER = 1
PYEOF
chmod 0640 "$T/sitecustomize.py"
cp "$T/sitecustomize.py" "$T/orig.py"

"$TOOL" install "$DATA/measured" "$T/sitecustomize.py" > "$T/out1" || fail "first install"
[ "$(cat "$T/out1")" = "$T/sitecustomize.py" ] || fail "written path: $(cat "$T/out1")"
cp "$T/sitecustomize.py" "$T/after1.py"
"$TOOL" install "$DATA/measured" "$T/sitecustomize.py" > "$T/out2" || fail "second install"
cmp -s "$T/after1.py" "$T/sitecustomize.py" || fail "second install changed the file"
[ "$(grep -c '^# >>> nccltune >>>$' "$T/sitecustomize.py")" = 1 ] || fail "start markers"
[ "$(grep -c '^# <<< nccltune <<<$' "$T/sitecustomize.py")" = 1 ] || fail "end markers"
# everything outside the block is kept byte for byte
sed '/^# >>> nccltune >>>$/,/^# <<< nccltune <<<$/d' "$T/orig.py" > "$T/orig.rest"
sed '/^# >>> nccltune >>>$/,/^# <<< nccltune <<<$/d' "$T/sitecustomize.py" > "$T/new.rest"
cmp -s "$T/orig.rest" "$T/new.rest" || fail "content outside the block changed"
# the block is the sitecustomize export, in place of the old one
"$TOOL" export sitecustomize "$DATA/measured" > "$T/block.py"
sed -n '/^# >>> nccltune >>>$/,/^# <<< nccltune <<<$/p' "$T/sitecustomize.py" > "$T/new.block"
cmp -s "$T/block.py" "$T/new.block" || fail "installed block differs from the export"
[ "$(tail -n 1 "$T/sitecustomize.py")" = "X_AFTER = 1" ] || fail "block not in place"
# the backup holds the file before the last change; the mode is kept
cmp -s "$T/orig.py" "$T/sitecustomize.py.nccltune-bak" || fail "backup"
[ "$(stat -c %a "$T/sitecustomize.py")" = 640 ] || fail "mode $(stat -c %a "$T/sitecustomize.py")"
ls "$T" | grep -q '\.tmp\.' && fail "temporary file left behind"

# Python imports it: exactly the tuned variables, and a pinned one stays as it was.
show_env='import os,json;print(json.dumps({k:v for k,v in os.environ.items() if k.startswith("NCCL_")}, sort_keys=True))'
got=$(env -i PATH="$PATH" HOME="${HOME:-/}" PYTHONPATH="$T" NCCL_NTHREADS=256 "$PY" -c "$show_env")
want='{"NCCL_ALGO": "Ring", "NCCL_BUFFSIZE": "131072", "NCCL_MAX_NCHANNELS": "2", "NCCL_NTHREADS": "256", "NCCL_P2P_LEVEL": "SYS", "NCCL_PROTO": "LL"}'
[ "$got" = "$want" ] || fail "python saw $got, want $want"
# NCCLTUNE_OFF=1: the block sets nothing (examples/client/compare.py's "defaults")
got=$(env -i PATH="$PATH" HOME="${HOME:-/}" PYTHONPATH="$T" NCCLTUNE_OFF=1 "$PY" -c "$show_env")
[ "$got" = "{}" ] || fail "NCCLTUNE_OFF=1: python saw $got"
got=$(env -i PATH="$PATH" HOME="${HOME:-/}" PYTHONPATH="$T" "$PY" -c 'import sitecustomize; print(sitecustomize.X_AFTER)')
[ "$got" = 1 ] || fail "the rest of sitecustomize.py no longer runs"

# A new file: just the block, mode 0644, no backup. NCCL defaults best: sets nothing.
mkdir "$T/fresh"
"$TOOL" install "$DATA/defaults-best" "$T/fresh/sitecustomize.py" >/dev/null || fail "fresh"
cmp -s "$T/fresh/sitecustomize.py" - <<EOF2 || fail "fresh file content"
$("$TOOL" export sitecustomize "$DATA/defaults-best")
EOF2
[ "$(stat -c %a "$T/fresh/sitecustomize.py")" = 644 ] || fail "fresh mode"
[ ! -e "$T/fresh/sitecustomize.py.nccltune-bak" ] || fail "backup of nothing"
got=$(env -i PATH="$PATH" HOME="${HOME:-/}" PYTHONPATH="$T/fresh" "$PY" -c "$show_env")
[ "$got" = "{}" ] || fail "defaults-best set $got"

# Through a symlink (Ubuntu: /usr/lib/python3.X/sitecustomize.py -> /etc/...): the target
# is updated and the link stays a link.
mkdir "$T/etc" "$T/lib"
printf 'A = 1\n' > "$T/etc/sitecustomize.py"
ln -s "$T/etc/sitecustomize.py" "$T/lib/sitecustomize.py"
"$TOOL" inst sitecustomize "$DATA/model" "$T/lib/sitecustomize.py" - allow-model > "$T/out3" 2>/dev/null || fail "symlink"
[ -L "$T/lib/sitecustomize.py" ] || fail "symlink replaced by a file"
[ "$(cat "$T/out3")" = "$T/etc/sitecustomize.py" ] || fail "symlink written path"
head -n 1 "$T/etc/sitecustomize.py" | grep -qx 'A = 1' || fail "symlink target content"
grep -q 'source: model (pcie-gen5-8gpu) - not a measurement' "$T/etc/sitecustomize.py" ||
	fail "model source line"

# Broken marker pairs and two blocks are refused (status 2); the file is untouched.
for case in start-only end-only two-blocks nested; do
	case $case in
	start-only) printf 'A = 1\n# >>> nccltune >>>\nB = 2\n' > "$T/bad.py"; want='start marker without an end marker' ;;
	end-only) printf 'A = 1\n# <<< nccltune <<<\n' > "$T/bad.py"; want='end marker without a start marker' ;;
	two-blocks) printf '# >>> nccltune >>>\n# <<< nccltune <<<\n# >>> nccltune >>>\n# <<< nccltune <<<\n' > "$T/bad.py"; want='a second nccltune block' ;;
	nested) printf '# >>> nccltune >>>\n# >>> nccltune >>>\n# <<< nccltune <<<\n' > "$T/bad.py"; want='start marker inside the block' ;;
	esac
	cp "$T/bad.py" "$T/bad.orig"
	rc=0
	"$TOOL" install "$DATA/measured" "$T/bad.py" 2> "$T/err" >/dev/null || rc=$?
	[ "$rc" = 2 ] || fail "$case: status $rc"
	grep -q "$want" "$T/err" || fail "$case: message $(cat "$T/err")"
	grep -q "$T/bad.py:[0-9]" "$T/err" || fail "$case: no file:line in $(cat "$T/err")"
	cmp -s "$T/bad.py" "$T/bad.orig" || fail "$case: file changed"
	[ ! -e "$T/bad.py.nccltune-bak" ] || fail "$case: backup written"
done

# A results file whose best.env sets a loader variable (a plugin, a file NCCL opens), a
# site setting, a logging variable or one nccltune does not know: --install refuses it
# (status 2, naming the key) in every format that installs, and the target is untouched.
printf 'A = 1\n' > "$T/roles.py"
printf 'NCCL_DEBUG=WARN\n' > "$T/roles.conf"
cp "$T/roles.py" "$T/roles.py.orig"
cp "$T/roles.conf" "$T/roles.conf.orig"
for f in "$DATA"/roles/*.json; do
	key=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
print([w + "." + k for w, a, b in (("best.env", d["best"]["env"], m["best"]["env"]),
                                   ("pinned", d["pinned"], m["pinned"])) for k in a if k not in b][0])' "$f" "$DATA/measured/results.json")
	for how in install install-conf; do
		target=$T/roles.py
		[ "$how" = install-conf ] && target=$T/roles.conf
		rc=0
		"$TOOL" $how "$f" "$target" > /dev/null 2> "$T/err" || rc=$?
		[ "$rc" = 2 ] || fail "$(basename "$f") $how: status $rc"
		grep -q "$key: " "$T/err" || fail "$(basename "$f") $how: message $(cat "$T/err")"
		cmp -s "$target" "$target.orig" || fail "$(basename "$f") $how: target changed"
		[ ! -e "$target.nccltune-bak" ] || fail "$(basename "$f") $how: backup written"
	done
done

# The owner and group of the file are kept (and given to the backup); as root any owner.
if [ "$(id -u)" = 0 ]; then
	printf 'A = 1\n' > "$T/owned.py"
	chown 12345:23456 "$T/owned.py"
	chmod 0640 "$T/owned.py"
	"$TOOL" install "$DATA/measured" "$T/owned.py" >/dev/null || fail "owned file"
	[ "$(stat -c %u:%g:%a "$T/owned.py")" = 12345:23456:640 ] ||
		fail "owner/group/mode not kept: $(stat -c %u:%g:%a "$T/owned.py")"
	[ "$(stat -c %u:%g:%a "$T/owned.py.nccltune-bak")" = 12345:23456:640 ] ||
		fail "backup owner: $(stat -c %u:%g:%a "$T/owned.py.nccltune-bak")"
	# a user who may write the folder but is not the owner cannot keep it: refused, and the
	# file is left as it is (not silently given to that user)
	if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
		mkdir "$T/shared"
		chmod 0711 "$T"
		chmod 0777 "$T/shared"
		printf 'A = 1\n' > "$T/shared/site.py"
		chmod 0666 "$T/shared/site.py"
		cp "$T/shared/site.py" "$T/shared.orig"
		rc=0
		setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/ \
			"$TOOL" install "$DATA/measured" "$T/shared/site.py" >/dev/null 2> "$T/err" || rc=$?
		[ "$rc" = 1 ] || fail "not the owner: status $rc ($(cat "$T/err"))"
		grep -q "cannot give the new file the owner 0:0" "$T/err" || fail "not the owner: $(cat "$T/err")"
		cmp -s "$T/shared/site.py" "$T/shared.orig" || fail "not the owner: file changed"
		[ "$(stat -c %u "$T/shared/site.py")" = 0 ] || fail "not the owner: owner changed"
		ls "$T/shared" | grep -q '\.tmp\.' && fail "not the owner: temporary left"
	else
		echo "note: no setpriv or no user nobody: the not-the-owner case skipped"
	fi
else
	echo "note: not root: the owner case skipped"
fi

# A file with other hard links is refused, not replaced (the other names would keep the
# old text): status 2, both names untouched.
printf 'A = 1\n' > "$T/linked.py"
ln "$T/linked.py" "$T/linked2.py"
rc=0
"$TOOL" install "$DATA/measured" "$T/linked.py" >/dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "hard link: status $rc"
grep -q "has 2 hard links" "$T/err" || fail "hard link: $(cat "$T/err")"
[ "$(cat "$T/linked2.py")" = "A = 1" ] && [ "$(stat -c %h "$T/linked.py")" = 2 ] || fail "hard link: changed"

# An earlier block found however it is indented, and refused when not at the top level:
# no second block is appended after it.
printf 'import os\nif os.environ.get("X"):\n    # >>> nccltune >>>\n    pass\n    # <<< nccltune <<<\n' > "$T/indented.py"
printf 'NCCL_DEBUG=WARN\n  # >>> nccltune >>>\nNCCL_PROTO=LL\n  # <<< nccltune <<<\n' > "$T/indented.conf"
for f in indented.py indented.conf; do
	cp "$T/$f" "$T/$f.orig"
	how=install
	case $f in *.conf) how=install-conf ;; esac
	rc=0
	"$TOOL" $how "$DATA/measured" "$T/$f" >/dev/null 2> "$T/err" || rc=$?
	[ "$rc" = 2 ] || fail "$f: status $rc"
	grep -q "$T/$f:[23]: an nccltune marker indented by [24] column(s), not at the top level" "$T/err" ||
		fail "$f: $(cat "$T/err")"
	cmp -s "$T/$f" "$T/$f.orig" || fail "$f: changed"
done

# Marker lines inside a string literal are text, not markers: the string (and the code
# after it) is kept, the block is appended, and a second install replaces only it.
cat > "$T/strings.py" <<'PYEOF'
DOC = """
# >>> nccltune >>>
user text that must stay
# <<< nccltune <<<
"""
HALF = '''
# >>> nccltune >>>
'''
AFTER = 2
PYEOF
cp "$T/strings.py" "$T/strings.orig"
"$TOOL" install "$DATA/measured" "$T/strings.py" >/dev/null || fail "strings: install"
"$TOOL" install "$DATA/measured" "$T/strings.py" >/dev/null || fail "strings: second install"
head -n 9 "$T/strings.py" | cmp -s - "$T/strings.orig" || fail "strings: the user's code changed"
[ "$(grep -c '^# >>> nccltune >>>$' "$T/strings.py")" = 3 ] || fail "strings: not one block appended"
got=$(env -i PATH="$PATH" PYTHONPATH="$T" "$PY" -c 'import strings, os
print(repr(strings.DOC), repr(strings.HALF), strings.AFTER)')
want=$(env -i PATH="$PATH" "$PY" -c 'exec(open("'"$T/strings.orig"'").read()); print(repr(DOC), repr(HALF), AFTER)')
[ "$got" = "$want" ] || fail "strings: python sees $got, want $want"
got=$(env -i PATH="$PATH" PYTHONPATH="$T" "$PY" -c 'import strings, os; print(os.environ.get("NCCL_PROTO"))')
[ "$got" = LL ] || fail "strings: the block did not run: $got"

# Markers that are top-level comment lines of the tokenizer but sit inside brackets: the
# merged file is checked with the interpreter's parser before anything is replaced.
printf 'X = (\n# >>> nccltune >>>\n1\n# <<< nccltune <<<\n)\n' > "$T/brackets.py"
cp "$T/brackets.py" "$T/brackets.orig"
rc=0
"$TOOL" install "$DATA/measured" "$T/brackets.py" >/dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "brackets: status $rc"
grep -q "$T/brackets.py: with nccltune's block in place the file would not be valid Python" "$T/err" ||
	fail "brackets: $(cat "$T/err")"
cmp -s "$T/brackets.py" "$T/brackets.orig" || fail "brackets: changed"
[ ! -e "$T/brackets.py.nccltune-bak" ] || fail "brackets: backup written"

# A file that is not valid Python is not edited (its interpreter's parser says why).
printf 'def broken(:\n    pass\n' > "$T/broken.py"
cp "$T/broken.py" "$T/broken.orig"
rc=0
"$TOOL" install "$DATA/measured" "$T/broken.py" >/dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "broken python: status $rc"
grep -q "$T/broken.py:[0-9]*:.*not valid Python" "$T/err" || fail "broken python: $(cat "$T/err")"
cmp -s "$T/broken.py" "$T/broken.orig" || fail "broken python: changed"

# No configuration worked: nothing to install (status 4), nothing written.
rc=0
"$TOOL" install "$DATA/noconfig" "$T/none.py" 2>/dev/null >/dev/null || rc=$?
[ "$rc" = 4 ] || fail "noconfig status $rc"
[ ! -e "$T/none.py" ] || fail "noconfig wrote a file"

# Without a target the interpreter says which sitecustomize it imports. A PYTHONPATH
# entry holding one comes first on sys.path, so that one is chosen and merged.
mkdir "$T/pp"
printf 'B = 2\n' > "$T/pp/sitecustomize.py"
# PY is no virtual environment, so that file is system-wide: refused without --system.
rc=0
PYTHONPATH="$T/pp" "$TOOL" install "$DATA/measured" - "$PY" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "auto without system: status $rc"
grep -q "$T/pp/sitecustomize.py is a system-wide sitecustomize .*only with --system" "$T/err" ||
	fail "auto without system: $(cat "$T/err")"
grep -q nccltune "$T/pp/sitecustomize.py" && fail "auto without system: changed"
PYTHONPATH="$T/pp" "$TOOL" inst sitecustomize "$DATA/measured" - "$PY" system > "$T/out4" 2> "$T/notes" ||
	fail "auto"
grep -q "^warning: $T/pp/sitecustomize.py is system-wide" "$T/notes" || fail "auto: no warning: $(cat "$T/notes")"
[ "$(cat "$T/out4")" = "$T/pp/sitecustomize.py" ] || fail "auto chose $(cat "$T/out4")"
grep -q '^# >>> nccltune >>>$' "$T/pp/sitecustomize.py" || fail "auto: no block"
# A fresh virtual environment whose interpreter imports no sitecustomize: a new one in
# its site-packages (skipped when the base interpreter has one, which we must not touch).
if "$PY" -m venv --without-pip "$T/venv" 2>/dev/null &&
   "$T/venv/bin/python" -c 'import importlib.util,sys; sys.exit(importlib.util.find_spec("sitecustomize") is not None)'; then
	"$TOOL" install "$DATA/measured" - "$T/venv/bin/python" > "$T/out5" || fail "venv"
	case $(cat "$T/out5") in
	"$T"/venv/lib/python3*/site-packages/sitecustomize.py) ;;
	*) fail "venv chose $(cat "$T/out5")" ;;
	esac
	got=$(env -i PATH="$PATH" HOME="${HOME:-/}" "$T/venv/bin/python" -c "$show_env")
	case $got in *'"NCCL_PROTO": "LL"'*) ;; *) fail "venv python saw $got" ;; esac
else
	echo "note: venv part skipped (no venv, or the base interpreter has a sitecustomize)"
fi
# An interpreter that cannot run: status 1 and a message naming it.
rc=0
"$TOOL" install "$DATA/measured" - "$T/no-such-python" 2> "$T/err" >/dev/null || rc=$?
[ "$rc" = 1 ] || fail "missing python status $rc"
grep -q "no-such-python" "$T/err" || fail "missing python message $(cat "$T/err")"
# the fixtures in the source tree are never written to (installs record themselves in the
# session folder: the copies)
for d in measured model defaults-best; do
	[ ! -e "$NCCLTUNE_SOURCE_ROOT/tests/workflows/data/$d/installed.json" ] ||
		fail "an install wrote into the source tree's fixture $d"
done
echo "install: ok"
