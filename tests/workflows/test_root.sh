#!/bin/sh
# test_root.sh - retune, check and install run as root against what another user (uid
# 65534, nobody) can change (issue 31). Each case names its finding:
#  C1  retune refuses a STATE_DIR, STATE/sessions, a folder on the way to STATE or to the
#      session in use, or a probe program that another user can change, before any
#      probe runs (a wrapper probe logs every start);
#  M4  STATE/lock a symlink: refused, its target never created;
#  M5  --init refuses the session every later retune would refuse (another user's);
#  M1  check never loads the plugin an install names (a library whose constructor
#      leaves a file), and still tells a non-library from a plugin;
#  M2  install does not import a json.py of the current folder;
#  M3  install does not run a .pth of the venv's site-packages; a venv another user
#      owns is not run as root at all;
#  M8  examples/retune.sh has no python3 default.
# Skipped (77) unless run as root.
set -eu
NT=$1
FAKE=$2
CTOR=$3
SRC=$NCCLTUNE_SOURCE_ROOT
[ "$(id -u)" = 0 ] || { echo "not root: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
PY=$(python3 -c 'import sys; print(sys.executable)')
NOBODY=65534
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd -P)
chmod 755 "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
ran() { [ -s "$T/ran" ]; }   # did the logging probe start since the last reset?
expect() {   # expect RC WHAT PATTERN: the last command's status and stderr ($T/err)
	[ "$rc" = "$1" ] || fail "$2: exit $rc: $(cat "$T/err")"
	grep -q -- "$3" "$T/err" || fail "$2: $(cat "$T/err")"
}

# a probe that logs every start, then is the fake probe
cat > "$T/probe" <<EOF
#!/bin/sh
echo "\$*" >> "$T/ran"
exec "$FAKE" "\$@"
EOF
chmod 755 "$T/probe"
"$NT" run --probe "$T/probe" --budget 6 --seed 1 --strategy random --out "$T/s1" --quiet \
	2>/dev/null || fail "the session"

# ---- C1: the state folder and the way to it ----
S=$T/st/state
mkdir "$T/st"
"$NT" retune --init "$S" --from "$T/s1" > /dev/null || fail "init"
: > "$T/ran"
"$NT" retune --quiet "$S" > /dev/null || fail "a trusted state: exit $?"
ran || fail "a trusted state: the probe did not run"
for case in state sessions parent; do
	case $case in
	state) rmdir "$S/sessions"; chown "$NOBODY" "$S"; what="$S: owned by uid $NOBODY" ;;
	sessions) chown "$NOBODY" "$S/sessions"; what="$S/sessions: owned by uid $NOBODY" ;;
	parent) chmod 777 "$T/st"; what="$T/st: writable by others" ;;
	esac
	: > "$T/ran"
	rc=0
	"$NT" retune --quiet "$S" > /dev/null 2> "$T/err" || rc=$?
	expect 2 "C1 $case" "$S: refused: $what"
	ran && fail "C1 $case: the probe ran"
	chown 0 "$S"
	mkdir -p "$S/sessions"
	chown 0 "$S/sessions"
	chmod 755 "$T/st"
done
# a sticky folder on the way (as /tmp is) is fine
chmod 1777 "$T/st"
"$NT" retune --quiet "$S" > /dev/null || fail "a sticky folder on the way"
chmod 755 "$T/st"

# the session in use: a folder on the way writable by another user
mkdir "$T/w"
cp -R "$T/s1" "$T/w/s2"
S2=$T/st2
"$NT" retune --init "$S2" --from "$T/w/s2" > /dev/null || fail "init s2"
chmod 777 "$T/w"
: > "$T/ran"
rc=0
"$NT" retune --quiet "$S2" > /dev/null 2> "$T/err" || rc=$?
expect 2 "C1 session's folder" "$T/w/s2: refused: $T/w: writable by others"
ran && fail "C1 session's folder: the probe ran"
chmod 755 "$T/w"
# check refuses it too (it runs the probe as well)
chmod 777 "$T/w"
rc=0
"$NT" check "$T/w/s2" > /dev/null 2> "$T/err" || rc=$?
expect 2 "C1 check" "$T/w/s2: refused: $T/w: writable by others"
ran && fail "C1 check: the probe ran"
chmod 755 "$T/w"

# the probe program another user can change
chown "$NOBODY" "$T/probe"
rc=0
"$NT" retune --quiet "$S" > /dev/null 2> "$T/err" || rc=$?
expect 2 "C1 probe" "the recorded probe: $T/probe: owned by uid $NOBODY"
ran && fail "C1 probe: it ran"
chown 0 "$T/probe"

# ---- M4: the lock is never a link ----
ln -s "$T/victim" "$S/lock.x"
rm -f "$S/lock"
mv "$S/lock.x" "$S/lock"
rc=0
"$NT" retune --quiet "$S" > /dev/null 2> "$T/err" || rc=$?
expect 1 "M4" "$S/lock: cannot open it: a symbolic link"
[ ! -e "$T/victim" ] || fail "M4: the link's target was created"
ran && fail "M4: the probe ran"
rm "$S/lock"

# ---- M5: --init validates as retune does ----
cp -R "$T/s1" "$T/s3"
chown -R "$NOBODY" "$T/s3"
rc=0
"$NT" retune --init "$T/st3" --from "$T/s3" > /dev/null 2> "$T/err" || rc=$?
expect 2 "M5" "$T/s3: refused: $T/s3: owned by uid $NOBODY"
[ ! -e "$T/st3/current" ] || fail "M5: current made"
rc=0
"$NT" retune --init "$T/st3" --from "$T/s1" > /dev/null 2> "$T/err" || fail "M5: a good session: $(cat "$T/err")"

# ---- M1: the installed plugin is judged without loading it ----
touch "$T/x.pth"
echo "not a library" > "$T/text.so"
for plugin in "$CTOR" /bin/sh "$T/text.so"; do
	printf '{"schema": "nccltune-installed/1", "installs": [{"format": "pth", "file": "%s", "plugin": "%s", "table": null}]}\n' \
		"$T/x.pth" "$plugin" > "$T/s1/installed.json"
	rc=0
	NCCLTUNE_TEST_CTOR_MARK=$T/loaded "$NT" check "$T/s1" > "$T/out" 2> "$T/err" || rc=$?
	[ ! -e "$T/loaded" ] || fail "M1: check loaded $plugin"
	case $plugin in
	"$CTOR") [ "$rc" = 0 ] && grep -q "^unchanged" "$T/out" || fail "M1: the plugin-like library: $rc $(cat "$T/err")" ;;
	/bin/sh) expect 1 "M1 /bin/sh" "/bin/sh: not nccltune's tuner plugin" ;;
	*) expect 1 "M1 text" "$T/text.so: not an ELF file" ;;
	esac
done
rm "$T/s1/installed.json"

# ---- M2, M3: what install asks the interpreter ----
"$PY" -m venv --without-pip "$T/venv" || { echo "no venv: the rest skipped"; exit 0; }
V=$T/venv/bin/python
SITE=$("$V" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir "$T/cwd"
echo "open('$T/m2', 'w').close()" > "$T/cwd/json.py"
echo "import os; open('$T/m3', 'w').close()" > "$SITE/evil.pth"
rm -f "$T/m3"
(cd "$T/cwd" && "$NT" export --install --python "$V" "$T/s1") > /dev/null 2> "$T/err" ||
	fail "install: $(cat "$T/err")"
[ -f "$SITE/nccltune.pth" ] || fail "install: no .pth"
[ ! -e "$T/m2" ] || fail "M2: install imported the current folder's json.py"
[ ! -e "$T/m3" ] || fail "M3: install ran a .pth of the venv"
(cd "$T/cwd" && "$NT" uninstall --python "$V") > /dev/null 2> "$T/err" || fail "uninstall: $(cat "$T/err")"
[ ! -e "$T/m2" ] && [ ! -e "$T/m3" ] || fail "M2/M3: uninstall ran them"
rm "$SITE/evil.pth"
# a venv another user owns is not run as root
chown -R "$NOBODY" "$T/venv"
rc=0
"$NT" export --install --python "$V" "$T/s1" > /dev/null 2> "$T/err" || rc=$?
expect 2 "M3 owner" "$V: refused to run it as root: $T/venv: owned by uid $NOBODY"
[ ! -e "$SITE/nccltune.pth" ] || fail "M3 owner: installed"

# ---- M8: the retune script names the interpreter or stops ----
rc=0
env -u NCCLTUNE_PYTHON sh "$SRC/examples/retune.sh" > /dev/null 2> "$T/err" || rc=$?
expect 2 "M8 retune.sh" "set NCCLTUNE_PYTHON"
echo "root: ok"
