#!/bin/sh
# test_install_conf.sh - nccltune_install with format nccl-conf: merge the block into an
# NCCL configuration file that has other settings, twice; what NCCL would then set, read
# with NCCL's rules (src/misc/param.cc: '#' at the start of a line is a comment, a line
# splits at its first '=', the environment and then the first line for a variable win);
# the refusal of a line that would shadow a tuned variable; the default targets
# ($NCCL_CONF_FILE, else ~/.nccl.conf in the home folder NCCL uses, the password
# database's, never $HOME); the CLI's --format nccl-conf --install; and uninstall of a
# ~/.nccl.conf that nccltune created (removed) or changed (the rest kept).
# Usage: test_install_conf.sh WF_TOOL [NCCLTUNE [FAKEPW_SO]]
set -eu
TOOL=$1
NT=${2:-}
FAKEPW=${3:-}
DATA=$NCCLTUNE_SOURCE_ROOT/tests/workflows/data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd -P)
# the fixtures, copied: an install from a session folder records itself there
cp -R "$DATA" "$T/data"
DATA=$T/data
fail() { echo "FAIL: $*" >&2; exit 1; }

# What NCCL ends up with for NAME, given the environment and the file, by its rules.
nccl_sees() {
	name=$1 file=$2
	eval "envval=\${$name-}"
	if [ -n "$envval" ]; then printf '%s\n' "$envval"; return; fi
	awk -v n="$name" 'substr($0, 1, 1) != "#" && index($0, "=") > 0 {
		k = substr($0, 1, index($0, "=") - 1)
		if (k == n) { print substr($0, index($0, "=") + 1); exit }
	}' "$file"
}

# A user's ~/.nccl.conf: settings of their own, a comment, no nccltune block yet.
cat > "$T/nccl.conf" <<'EOF'
# site settings
NCCL_SOCKET_IFNAME==eth0
NCCL_DEBUG=WARN
EOF
chmod 0600 "$T/nccl.conf"
cp "$T/nccl.conf" "$T/orig.conf"

"$TOOL" install-conf "$DATA/measured" "$T/nccl.conf" > "$T/out1" || fail "first install"
[ "$(cat "$T/out1")" = "$T/nccl.conf" ] || fail "written path: $(cat "$T/out1")"
cp "$T/nccl.conf" "$T/after1.conf"
"$TOOL" install-conf "$DATA/measured" "$T/nccl.conf" >/dev/null || fail "second install"
cmp -s "$T/after1.conf" "$T/nccl.conf" || fail "second install changed the file"
[ "$(grep -c '^# >>> nccltune >>>$' "$T/nccl.conf")" = 1 ] || fail "start markers"
# the user's lines are kept byte for byte, the block is the export
sed '/^# >>> nccltune >>>$/,/^# <<< nccltune <<<$/d' "$T/nccl.conf" | sed '$d' > "$T/rest"
cmp -s "$T/orig.conf" "$T/rest" || fail "content outside the block changed"
"$TOOL" export nccl-conf "$DATA/measured" > "$T/block"
sed -n '/^# >>> nccltune >>>$/,/^# <<< nccltune <<<$/p' "$T/nccl.conf" > "$T/new.block"
cmp -s "$T/block" "$T/new.block" || fail "installed block differs from the export"
cmp -s "$T/orig.conf" "$T/nccl.conf.nccltune-bak" || fail "backup"
[ "$(stat -c %a "$T/nccl.conf")" = 600 ] || fail "mode $(stat -c %a "$T/nccl.conf")"

# What NCCL reads from it: the tuned values and the user's own; the environment wins.
for kv in NCCL_PROTO=LL NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=2 NCCL_BUFFSIZE=131072 \
          NCCL_NTHREADS=64 NCCL_P2P_LEVEL=SYS NCCL_SOCKET_IFNAME==eth0 NCCL_DEBUG=WARN; do
	name=${kv%%=*} want=${kv#*=}
	got=$(unset "$name"; nccl_sees "$name" "$T/nccl.conf")
	[ "$got" = "$want" ] || fail "$name: NCCL would read '$got', want '$want'"
done
got=$(NCCL_NTHREADS=256; export NCCL_NTHREADS; nccl_sees NCCL_NTHREADS "$T/nccl.conf")
[ "$got" = 256 ] || fail "the environment did not win: $got"

# A line that sets a tuned variable before the block would win over it: refused, with
# the line named, and the file is left alone.
printf 'NCCL_PROTO=Simple\nNCCL_DEBUG=INFO\n' > "$T/shadow.conf"
cp "$T/shadow.conf" "$T/shadow.orig"
rc=0
"$TOOL" install-conf "$DATA/measured" "$T/shadow.conf" > /dev/null 2> "$T/shadow.err" || rc=$?
[ "$rc" = 2 ] || fail "shadowing line: exit $rc, want 2"
grep -q "shadow.conf:1: sets NCCL_PROTO outside nccltune's block" "$T/shadow.err" ||
	fail "message: $(cat "$T/shadow.err")"
cmp -s "$T/shadow.orig" "$T/shadow.conf" || fail "refused install changed the file"
[ ! -e "$T/shadow.conf.nccltune-bak" ] || fail "refused install left a backup"
# so would one for a pinned variable (the block sets it too)
printf 'NCCL_P2P_LEVEL=PIX\n' > "$T/shadow2.conf"
rc=0
"$TOOL" install-conf "$DATA/measured" "$T/shadow2.conf" > /dev/null 2> "$T/shadow.err" || rc=$?
[ "$rc" = 2 ] || fail "shadowing a pinned variable: exit $rc, want 2"
grep -q "shadow2.conf:1: sets NCCL_P2P_LEVEL outside nccltune's block" "$T/shadow.err" ||
	fail "message: $(cat "$T/shadow.err")"
# after the block it is dead and harmless: accepted (the block's own line comes first)
{ cat "$T/block"; printf 'NCCL_PROTO=Simple\n'; } > "$T/after.conf"
"$TOOL" install-conf "$DATA/measured" "$T/after.conf" >/dev/null || fail "line after the block"
[ "$(nccl_sees NCCL_PROTO "$T/after.conf")" = LL ] || fail "the block's line does not win"
# a commented-out line does not count
printf '#NCCL_PROTO=Simple\n' > "$T/commented.conf"
"$TOOL" install-conf "$DATA/measured" "$T/commented.conf" >/dev/null || fail "commented line"

# Default target: $NCCL_CONF_FILE, else ~/.nccl.conf.
mkdir "$T/home"
got=$(NCCL_CONF_FILE="$T/custom.conf" HOME="$T/home" "$TOOL" install-conf "$DATA/measured" -) ||
	fail "install to NCCL_CONF_FILE"
[ "$got" = "$T/custom.conf" ] && [ -f "$T/custom.conf" ] || fail "NCCL_CONF_FILE target: $got"
if [ -n "$FAKEPW" ]; then
	# the home folder is the password database's (as NCCL's userHomeDir), not $HOME:
	# with getpwuid pointed at $T/home and HOME at another folder, the file is
	# $T/home/.nccl.conf
	mkdir "$T/not-home"
	pw() { env -u NCCL_CONF_FILE HOME="$T/not-home" LD_PRELOAD="$FAKEPW" FAKEPW_DIR="$T/home" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" "$@"; }
	got=$(pw "$TOOL" install-conf "$DATA/measured" -) || fail "install to ~/.nccl.conf"
	[ "$got" = "$T/home/.nccl.conf" ] || fail "home target: $got (HOME is $T/not-home)"
	[ -z "$(ls -A "$T/not-home")" ] || fail "installed into \$HOME: $(ls -A "$T/not-home")"
	cmp -s "$T/block" "$T/home/.nccl.conf" || fail "new ~/.nccl.conf is not just the block"
	[ "$(stat -c %a "$T/home/.nccl.conf")" = 644 ] || fail "new file mode"
	# uninstall of the file nccltune created takes the file away, not leaving it empty
	if [ -n "$NT" ]; then
		out=$(pw "$NT" uninstall --format nccl-conf) || fail "uninstall: $out"
		[ ! -e "$T/home/.nccl.conf" ] || fail "uninstall left $(wc -c < "$T/home/.nccl.conf") bytes"
		printf '%s\n' "$out" | grep -q "removed $T/home/.nccl.conf: it held nothing but nccltune's block" ||
			fail "uninstall said: $out"
		# ... and of one with the user's own lines keeps them, naming the backup for what it is
		printf 'NCCL_DEBUG=WARN\n' > "$T/home/.nccl.conf"
		pw "$NT" export --format nccl-conf --install "$DATA/measured" > /dev/null ||
			fail "install next to the user's lines"
		out=$(pw "$NT" uninstall --format nccl-conf) || fail "uninstall: $out"
		[ "$(cat "$T/home/.nccl.conf")" = NCCL_DEBUG=WARN ] ||
			fail "uninstall: the user's lines: $(cat "$T/home/.nccl.conf")"
		printf '%s\n' "$out" | grep -q "before this uninstall (with nccltune's block)" ||
			fail "uninstall's backup note: $out"
	fi
fi

# The CLI: --format nccl-conf --install=PATH, and --python refused with it.
if [ -n "$NT" ]; then
	out=$("$NT" export --format nccl-conf --install="$T/cli.conf" "$DATA/measured") ||
		fail "nccltune export --format nccl-conf --install"
	[ "$(printf '%s\n' "$out" | tail -n 1)" = "installed the tuned environment into $T/cli.conf" ] ||
		fail "CLI said: $out"
	printf '%s\n' "$out" | grep -q "^affects every NCCL program that reads $T/cli.conf" ||
		fail "CLI did not say what it affects: $out"
	# the header names nccltune as it can be run: the CLI's path when it is not in PATH
	sed "s|$NT |nccltune |g" "$T/cli.conf" | cmp -s "$T/block" - || fail "CLI install content"
	rc=0
	"$NT" export --format nccl-conf --install="$T/cli2.conf" --python python3 \
		"$DATA/measured" >/dev/null 2>"$T/cli.err" || rc=$?
	[ "$rc" = 2 ] || fail "--python with nccl-conf: exit $rc"
	grep -q -- "--python only goes with a pth or sitecustomize install" "$T/cli.err" ||
		fail "CLI message: $(cat "$T/cli.err")"
	rc=0
	"$NT" export --format json --install="$T/x.json" "$DATA/measured" 2>/dev/null || rc=$?
	[ "$rc" = 2 ] || fail "--format json --install: exit $rc"
	# a loader variable in best.env: the CLI exits 2 naming the key, prints nothing
	for f in net-plugin tuner-plugin profiler-plugin env-plugin debug-file; do
		rc=0
		"$NT" export --format shell "$DATA/roles/$f.json" > "$T/cli.out" 2> "$T/cli.err" || rc=$?
		[ "$rc" = 2 ] || fail "CLI export of roles/$f.json: exit $rc"
		[ ! -s "$T/cli.out" ] || fail "CLI export of roles/$f.json printed something"
		grep -q "best.env.NCCL_[A-Z_]*: a loader variable" "$T/cli.err" || fail "CLI: $(cat "$T/cli.err")"
	done
fi
echo "nccl-conf install passed"
