#!/bin/sh
# test_floor.sh - export --install checks the NCCL floor of per-size rules (NCCL 2.24,
# tuner ABI v4) in the interpreter's own site-packages, read without importing anything:
# real virtual environments (python3 -m venv --without-pip) given a fake nvidia-nccl-cu12
# distribution. 2.28.9 (dist-info METADATA) installs and says so; 2.21.5 is refused with
# nothing written, and installs with --allow-old-nccl and a warning; the version in the
# library's file name (nvidia/nccl/lib/libnccl.so.2 -> libnccl.so.2.21.5) wins over the
# METADATA; no NCCL found, and an nccl-conf install, warn that the NCCL cannot be told.
set -eu
NT=$1
DATA=$NCCLTUNE_SOURCE_ROOT/tests/workflows/data
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd -P)
cp -R "$DATA/rules" "$T/rules"
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 -m venv --without-pip "$T/venv" || { echo "no venv module: skipped"; exit 77; }
V=$T/venv/bin/python
SITE=$("$V" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# nccl VERSION: a fake nvidia-nccl-cu12 distribution of that version (METADATA only)
nccl() {
	rm -rf "$SITE"/nvidia_nccl_cu12-*.dist-info "$SITE/nvidia"
	mkdir "$SITE/nvidia_nccl_cu12-$1.dist-info"
	printf 'Metadata-Version: 2.1\nName: nvidia-nccl-cu12\nVersion: %s\n\nVersion: 1.0\n' "$1" \
		> "$SITE/nvidia_nccl_cu12-$1.dist-info/METADATA"
}
inst() { "$NT" export --install --python "$V" "$@" "$T/rules" > "$T/out" 2> "$T/err"; }
uninst() { "$NT" uninstall --python "$V" > /dev/null 2>&1 || fail "uninstall: $*"; }

# 2.28.9: installed, and the note names the version and where it was read
nccl 2.28.9
inst || fail "2.28.9: $(cat "$T/err")"
[ -f "$SITE/nccltune.pth" ] || fail "2.28.9: nothing installed"
grep -q "NCCL 2.28.9 for $V ($SITE/nvidia_nccl_cu12-2.28.9.dist-info/METADATA): new enough" \
	"$T/out" || fail "2.28.9 note: $(cat "$T/out")"
uninst 2.28.9

# 2.21.5: refused, nothing written; --allow-old-nccl installs it with a warning
nccl 2.21.5
rc=0; inst || rc=$?
[ "$rc" = 2 ] || fail "2.21.5: exit $rc"
grep -q "NCCL 2.21.5 (.*METADATA) is older than 2.24: it has no tuner ABI v4" "$T/err" ||
	fail "2.21.5 message: $(cat "$T/err")"
grep -q -- "--allow-old-nccl installs it anyway" "$T/err" || fail "2.21.5: no flag named"
[ ! -e "$SITE/nccltune.pth" ] && [ ! -e "$SITE/_nccltune_env.py" ] || fail "2.21.5: installed"
inst --allow-old-nccl || fail "--allow-old-nccl: $(cat "$T/err")"
[ -f "$SITE/nccltune.pth" ] || fail "--allow-old-nccl: nothing installed"
grep -q "warning: NCCL 2.21.5 for .* is older than 2.24: installed anyway" "$T/out" ||
	fail "--allow-old-nccl warning: $(cat "$T/out")"
uninst 2.21.5
rc=0; "$NT" export --format json --allow-old-nccl "$T/rules" > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--allow-old-nccl without --install: exit $rc"

# the library's file name is what loads: it wins over a METADATA that says otherwise
nccl 2.28.9
mkdir -p "$SITE/nvidia/nccl/lib"
: > "$SITE/nvidia/nccl/lib/libnccl.so.2.21.5"
ln -s libnccl.so.2.21.5 "$SITE/nvidia/nccl/lib/libnccl.so.2"
rc=0; inst || rc=$?
[ "$rc" = 2 ] && grep -q "NCCL 2.21.5 ($SITE/nvidia/nccl/lib/libnccl.so.2) is older" "$T/err" ||
	fail "library file name: exit $rc: $(cat "$T/err")"

# no NCCL on the interpreter's path: installed, with a warning that it cannot tell
rm -rf "$SITE"/nvidia_nccl_cu12-*.dist-info "$SITE/nvidia"
inst || fail "unknown: $(cat "$T/err")"
grep -q "warning: per-size rules need NCCL 2.24 or newer .* cannot tell which NCCL $V loads (no nvidia-nccl-cu\* distribution on its path)" \
	"$T/out" || fail "unknown warning: $(cat "$T/out")"
uninst unknown

# two versions in one folder: cannot tell
mkdir "$SITE/nvidia_nccl_cu12-2.28.9.dist-info" "$SITE/nvidia_nccl_cu13-2.21.5.dist-info"
printf 'Version: 2.28.9\n' > "$SITE/nvidia_nccl_cu12-2.28.9.dist-info/METADATA"
printf 'Version: 2.21.5\n' > "$SITE/nvidia_nccl_cu13-2.21.5.dist-info/METADATA"
inst || fail "two versions: $(cat "$T/err")"
grep -q "cannot tell which NCCL $V loads (several or unreadable versions at $SITE)" "$T/out" ||
	fail "two versions warning: $(cat "$T/out")"
uninst two

# nccl-conf cannot know the server: says so
"$NT" export --format nccl-conf --install="$T/n.conf" "$T/rules" > "$T/out" 2> "$T/err" ||
	fail "nccl-conf: $(cat "$T/err")"
grep -q "warning: per-size rules need NCCL 2.24 or newer in the server (tuner ABI v4); this nccl-conf install cannot tell which NCCL the server loads" \
	"$T/out" || fail "nccl-conf note: $(cat "$T/out")"
echo "ok"
