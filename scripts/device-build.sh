#!/bin/sh
# device-build.sh - build nccltune-probe for the GPU machine, here, the same way every
# time, into .carry/probe/ (ignored by git; pass `.carry/probe` in the device call's
# carry list). The GPU machine has no cJSON, GSL or NLopt and no package registry, so
# the probe is built on this machine (Debian 12, CUDA 13 + NCCL 2.28.9 headers) and the
# one library it needs that the GPU machine lacks, libcjson.so.1, travels beside it.
#
#   .carry/probe/bin/nccltune-probe        with the MPI launch mode (needs libmpi.so.40)
#   .carry/probe/bin/nccltune-probe-nompi  without it, for machines without Open MPI
#   .carry/probe/bin/probe_parse_report    the tuner's strict parser, for the GPU tests
#   .carry/probe/bin/nccltune              the tuner, to run whole sessions there
#   .carry/probe/bin/nccltune-model-probe  (the tuner looks for its probes beside itself)
#   .carry/probe/bin/nccltune-plugin-load  (nccltune verify's plugin check, beside it too)
#   .carry/probe/lib/libnccl-tuner-nccltune.so  nccltune's NCCL tuner plugin (libc only)
#   .carry/probe/lib/libcjson.so.1, libgsl.so.27, libgslcblas.so.0, libnlopt.so.0
#   .carry/probe/BUILD-INFO                what was built from what
#
# usage: scripts/device-build.sh [SOURCE_DIR]   (default: this checkout)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-$root}
out=$root/.carry/probe
build=$root/.carry/build-device

rm -rf "$build" "$build-nompi" "$out"
mkdir -p "$root/.carry"
meson setup "$build" "$src" -Dprobe=enabled -Dmpi=enabled -Dwerror=true \
	-Dbuildtype=debugoptimized >"$root/.carry/build-device.log" 2>&1 ||
	{ tail -20 "$root/.carry/build-device.log"; exit 1; }
meson compile -C "$build" nccltune-probe probe_parse_report cli/nccltune:executable nccltune-model-probe \
	models/nccltune-plugin-load:executable nccl-tuner-nccltune
meson setup "$build-nompi" "$src" -Dprobe=enabled -Dmpi=disabled -Dwerror=true \
	-Dbuildtype=debugoptimized >>"$root/.carry/build-device.log" 2>&1 ||
	{ tail -20 "$root/.carry/build-device.log"; exit 1; }
meson compile -C "$build-nompi" nccltune-probe

mkdir -p "$out/bin" "$out/lib"
cp "$build/probe/nccltune-probe" "$out/bin/nccltune-probe"
cp "$build-nompi/probe/nccltune-probe" "$out/bin/nccltune-probe-nompi"
cp "$build/tests/probe/probe_parse_report" "$out/bin/probe_parse_report"
cp "$build/cli/nccltune" "$build/models/nccltune-model-probe" "$build/models/nccltune-plugin-load" "$out/bin/"
cp "$build/plugin/libnccl-tuner-nccltune.so" "$out/lib/libnccl-tuner-nccltune.so"
cjson_dir=$(pkg-config --variable=libdir libcjson)
cp -L "$cjson_dir/libcjson.so.1" "$out/lib/libcjson.so.1"
# The tuner's own libraries: the GPU machine has none of them and no package registry.
for lib in libgsl.so.27 libgslcblas.so.0 libnlopt.so.0; do
	path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
	[ -n "$path" ] || { echo "device-build.sh: $lib not found here (scripts/deps.sh installs it)" >&2; exit 1; }
	cp -L "$path" "$out/lib/$lib"
done
{
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n) ($(. /etc/os-release && echo "$PRETTY_NAME"))"
	echo "source: $src"
	echo "compiler: $(cc --version | head -1)"
	echo "cjson: $(pkg-config --modversion libcjson) from $cjson_dir"
	"$build/probe/nccltune-probe" --version 2>/dev/null || true
	for b in "$out"/bin/*; do
		echo "$(basename "$b"): $(readelf -d "$b" | grep -E 'NEEDED|RUNPATH' | sed 's/.*\[\(.*\)\]/\1/' | tr '\n' ' ')"
	done
} >"$out/BUILD-INFO"
cat "$out/BUILD-INFO"
du -sh "$out"
