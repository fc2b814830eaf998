#!/bin/bash
# device-session.sh - a whole tuning session on the GPU machine with the real probe,
# in one command, writing into $OUT: the session folder (journal, results, exports,
# report) as a tarball, plus the terminal output of run, show and check.
#
# Run from the repository root with .carry/probe carried (scripts/device-build.sh
# makes it). NCCL_NVLS_ENABLE=0 is set and fixed in the space: multicast stays off.
#   usage: scripts/device-session.sh NAME [nccltune run options...]
set -u
export NCCL_NVLS_ENABLE=0
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
name=${1:?usage: device-session.sh NAME [run options]}
shift
out=${OUT:-$root/.carry/out}
export LD_LIBRARY_PATH="$root/.carry/probe/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=$root/.carry/probe/bin
# the carried layout has the plugin in lib/, where the tuner does not look by itself
export NCCLTUNE_PLUGIN=${NCCLTUNE_PLUGIN:-$root/.carry/probe/lib/libnccl-tuner-nccltune.so}
# The MPI build needs the machine's libmpi.so.40; use the build without MPI otherwise.
if ldd "$bin/nccltune-probe" | grep -q "not found"; then
	cp "$bin/nccltune-probe-nompi" "$bin/nccltune-probe"
fi
dir=/tmp/sessions/$name
mkdir -p "$out" /tmp/sessions
{
	echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) nccltune run --out $dir $*"
	/usr/bin/time -v "$bin/nccltune" run --out "$dir" "$@" 2>&1
	echo "exit $?"
	echo "== nccltune show"
	"$bin/nccltune" show "$dir"
	echo "== nccltune check (same machine: expect exit 0)"
	"$bin/nccltune" check "$dir"
	echo "exit $?"
	echo "== nccltune export --format shell"
	"$bin/nccltune" export --format shell "$dir"
} >"$out/$name.txt" 2>&1
tar -C /tmp/sessions -czf "$out/$name.tar.gz" "$name"
tail -40 "$out/$name.txt"
