#!/bin/sh
# test_pth.sh - the pth install for one interpreter, with real virtual environments
# (python3 -m venv --without-pip): after `install` the venv's python sees the tuned
# variables at start-up and the interpreter it was made from does not; NCCLTUNE_OFF=1
# turns it off; `uninstall` takes it away again and keeps the module as a backup; files
# nccltune did not write are left alone. A venv of Debian's /usr/bin/python3, whose
# /etc/python3.X/sitecustomize.py shadows any venv's own: --format sitecustomize refuses
# that system-wide file without --system (it never edits it), and the pth install works
# there. An interpreter that is not a venv (a stand-in): refused without --system,
# a warning with it. The CLI's `export --install` (pth by default) and `uninstall`.
set -eu
TOOL=$1
NT=${2:-}
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
proto='import os; print(os.environ.get("NCCL_PROTO"))'
sees() { env -i PATH="$PATH" "$@" -c "$proto"; }

"$PY" -m venv --without-pip "$T/venv" || { echo "no venv module: skipped"; exit 77; }
V=$T/venv/bin/python
SITE=$("$V" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[ "$(sees "$V")" = None ] || fail "the fresh venv already sees NCCL_PROTO"

"$TOOL" inst pth "$DATA/measured" - "$V" > "$T/out" 2> "$T/notes" || fail "install: $(cat "$T/notes")"
[ "$(cat "$T/out")" = "$SITE/nccltune.pth" ] || fail "written: $(cat "$T/out")"
grep -q "^affects only the virtual environment $T/venv" "$T/notes" || fail "notes: $(cat "$T/notes")"
[ "$(cat "$SITE/nccltune.pth")" = "import _nccltune_env" ] || fail "the .pth: $(cat "$SITE/nccltune.pth")"
"$TOOL" export sitecustomize "$DATA/measured" | cmp -s - "$SITE/_nccltune_env.py" ||
	fail "the module is not the sitecustomize export"
[ "$(sees "$V")" = LL ] || fail "the venv's python does not see NCCL_PROTO"
[ "$(sees "$V" -S)" = None ] || fail "with -S (no site) it still sees it"
[ "$(sees NCCLTUNE_OFF=1 "$V")" = None ] || fail "NCCLTUNE_OFF=1 did not turn it off"
[ "$(sees NCCL_PROTO=Simple "$V")" = Simple ] || fail "the environment did not win"
[ "$(sees "$PY")" = None ] || fail "the interpreter the venv was made from sees it"
# again: nothing changes, no backup of nothing
cp "$SITE/_nccltune_env.py" "$T/mod1"
"$TOOL" inst pth "$DATA/measured" - "$V" > /dev/null 2>&1 || fail "second install"
cmp -s "$T/mod1" "$SITE/_nccltune_env.py" || fail "second install changed the module"
[ ! -e "$SITE/_nccltune_env.py.nccltune-bak" ] || fail "second install wrote a backup"
# another result replaces the module, keeping the old one as the backup
"$TOOL" inst pth "$DATA/model" - "$V" allow-model > /dev/null 2>&1 || fail "install of another result"
cmp -s "$T/mod1" "$SITE/_nccltune_env.py.nccltune-bak" || fail "backup of the module"
[ "$(env -i PATH="$PATH" "$V" -c 'import os; print(os.environ.get("NCCL_MAX_NCHANNELS"))')" = 7 ] ||
	fail "the new result does not apply"

# uninstall: the .pth goes, the module is kept as a backup, the venv sees nothing
"$TOOL" uninst pth - "$V" > "$T/out" 2> "$T/notes" || fail "uninstall: $(cat "$T/notes")"
[ "$(cat "$T/out")" = "$SITE/nccltune.pth" ] || fail "uninstall written: $(cat "$T/out")"
[ ! -e "$SITE/nccltune.pth" ] && [ ! -e "$SITE/_nccltune_env.py" ] || fail "uninstall left files"
[ -f "$SITE/_nccltune_env.py.nccltune-bak" ] || fail "uninstall kept no backup"
grep -q "the module is kept as $SITE/_nccltune_env.py.nccltune-bak" "$T/notes" || fail "uninstall notes"
[ "$(sees "$V")" = None ] || fail "after uninstall the venv still sees NCCL_PROTO"
"$TOOL" uninst pth - "$V" > "$T/out" 2> "$T/notes" || fail "second uninstall"
[ ! -s "$T/out" ] && grep -q "nothing to uninstall" "$T/notes" || fail "second uninstall: $(cat "$T/notes")"

# files nccltune did not write are left alone
printf 'import something_else\n' > "$SITE/nccltune.pth"
for how in inst uninst; do
	rc=0
	if [ $how = inst ]; then
		"$TOOL" inst pth "$DATA/measured" - "$V" > /dev/null 2> "$T/err" || rc=$?
	else
		"$TOOL" uninst pth - "$V" > /dev/null 2> "$T/err" || rc=$?
	fi
	[ "$rc" = 2 ] || fail "foreign .pth, $how: status $rc"
	grep -q "nccltune.pth: exists and was not written by nccltune" "$T/err" || fail "foreign: $(cat "$T/err")"
	[ "$(cat "$SITE/nccltune.pth")" = "import something_else" ] || fail "foreign .pth changed"
done
rm "$SITE/nccltune.pth"

# An interpreter that is no venv: its site-packages is read by every program it runs and
# by venvs made with --system-site-packages: installed there only with --system (an
# unattended re-tune with python3 must not change them all; issue 31 M8), and the notes
# say so. A stand-in interpreter describes itself so (a real one's site-packages is not
# ours to change); everything else goes to the real python3. It is asked isolated and
# without site (-I -S, issue 31 M2/M3).
mkdir "$T/fakesite"
cat > "$T/fakepy" <<EOF
#!/bin/sh
[ "\$1 \$2 \$3" = "-I -S -c" ] || { echo "asked without -I -S: \$*" >&2; exit 9; }
case "\$4" in *purelib*)
	printf '{"executable": "/opt/py/bin/python3", "prefix": "/opt/py", "venv": false, "purelib": "$T/fakesite", "purelib_on_path": true, "sitecustomize": ""}\n'
	exit 0 ;;
esac
exec "$PY" "\$@"
EOF
chmod +x "$T/fakepy"
rc=0
"$TOOL" inst pth "$DATA/measured" - "$T/fakepy" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "no venv, no --system: status $rc"
grep -q "/opt/py/bin/python3 is not a virtual environment: $T/fakesite is its own site-packages.*only with --system" "$T/err" ||
	fail "no venv, no --system: $(cat "$T/err")"
[ ! -e "$T/fakesite/nccltune.pth" ] && [ ! -e "$T/fakesite/_nccltune_env.py" ] || fail "no venv, no --system: installed"
"$TOOL" inst pth "$DATA/measured" - "$T/fakepy" system > /dev/null 2> "$T/notes" || fail "no venv: $(cat "$T/notes")"
grep -q "^warning: /opt/py/bin/python3 is not a virtual environment: $T/fakesite is its own site-packages, so this affects every program it runs and every virtual environment made from it with --system-site-packages" \
	"$T/notes" || fail "no venv warning: $(cat "$T/notes")"
[ -f "$T/fakesite/nccltune.pth" ] || fail "no venv: no .pth"
# an uninstall only takes away what nccltune wrote: no --system needed
"$TOOL" uninst pth - "$T/fakepy" > /dev/null 2> "$T/notes" || fail "no venv uninstall: $(cat "$T/notes")"
[ ! -e "$T/fakesite/nccltune.pth" ] || fail "no venv uninstall left the .pth"

# Debian's interpreter: its sitecustomize (/etc/python3.X, through /usr/lib/python3.X)
# shadows a venv's, so "the venv's sitecustomize" is that system file: refused without
# --system, never edited; the pth install works for that venv alone.
DEB=/usr/bin/python3
if [ -x "$DEB" ] && "$DEB" -m venv --without-pip "$T/deb" 2>/dev/null &&
   DSC=$("$T/deb/bin/python" -c 'import sitecustomize; print(sitecustomize.__file__)' 2>/dev/null); then
	cp "$DSC" "$T/dsc.orig"
	DSC_REAL=$(readlink -f "$DSC")
	# should the refusal fail, the system file is put back before the test fails
	restore() { cmp -s "$DSC_REAL" "$T/dsc.orig" || { cat "$T/dsc.orig" > "$DSC_REAL";
		rm -f "$DSC_REAL.nccltune-bak"; fail "Debian venv: $1 (the system sitecustomize was changed; restored)"; }; }
	rc=0
	"$TOOL" inst sitecustomize "$DATA/measured" - "$T/deb/bin/python" > /dev/null 2> "$T/err" || rc=$?
	restore "sitecustomize install with status $rc"
	[ "$rc" = 2 ] || fail "Debian venv, sitecustomize: status $rc"
	grep -q "is a system-wide sitecustomize (.*nccltune changes it only with --system" "$T/err" ||
		fail "Debian venv: $(cat "$T/err")"
	cmp -s "$DSC" "$T/dsc.orig" || fail "Debian venv: the system sitecustomize changed"
	"$TOOL" inst pth "$DATA/measured" - "$T/deb/bin/python" > /dev/null 2>&1 || fail "Debian venv: pth"
	[ "$(sees "$T/deb/bin/python")" = LL ] || fail "Debian venv: pth not seen"
	[ "$(sees "$DEB")" = None ] || fail "Debian venv: the system interpreter sees it"
	"$TOOL" uninst pth - "$T/deb/bin/python" > /dev/null 2>&1 || fail "Debian venv: uninstall"
	[ "$(sees "$T/deb/bin/python")" = None ] || fail "Debian venv: still seen after uninstall"
	cmp -s "$DSC" "$T/dsc.orig" || fail "Debian venv: the system sitecustomize changed"
else
	echo "note: no Debian /usr/bin/python3 with a sitecustomize: that part skipped"
fi

# The CLI: export --install is pth by default; uninstall takes it away. A sitecustomize
# block installed and uninstalled leaves the file as it was.
if [ -n "$NT" ]; then
	out=$("$NT" export --install --python "$V" "$DATA/measured") || fail "CLI install: $out"
	printf '%s\n' "$out" | grep -qx "installed the tuned environment into $SITE/nccltune.pth" ||
		fail "CLI install said: $out"
	[ "$(sees "$V")" = LL ] || fail "CLI install not seen"
	out=$("$NT" uninstall --python "$V") || fail "CLI uninstall: $out"
	printf '%s\n' "$out" | grep -qx "removed nccltune's environment from $SITE/nccltune.pth" ||
		fail "CLI uninstall said: $out"
	[ "$(sees "$V")" = None ] || fail "CLI uninstall: still seen"
	printf 'A = 1\n' > "$SITE/sitecustomize.py"
	cp "$SITE/sitecustomize.py" "$T/sc.orig"
	"$NT" export --format sitecustomize --install --python "$V" "$DATA/measured" >/dev/null ||
		fail "CLI sitecustomize install"
	[ "$(sees "$V")" = LL ] || fail "CLI sitecustomize install not seen"
	"$NT" uninstall --format sitecustomize --python "$V" >/dev/null || fail "CLI sitecustomize uninstall"
	cmp -s "$SITE/sitecustomize.py" "$T/sc.orig" || fail "install + uninstall changed sitecustomize.py"
	[ "$(sees "$V")" = None ] || fail "CLI sitecustomize uninstall: still seen"
	rc=0
	"$NT" export --format pth "$DATA/measured" > /dev/null 2> "$T/err" || rc=$?
	[ "$rc" = 2 ] && grep -q "is installed, not printed" "$T/err" || fail "export --format pth: $rc"
fi
echo "pth: ok"
