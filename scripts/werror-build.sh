#!/usr/bin/env bash
# werror-build.sh - make BUILD_DIR a build with warnings as errors: set it up with
# -Dwerror=true when it does not exist, and when it does (say scripts/tune.sh made it,
# without -Werror) reconfigure it with -Dwerror=true, so that a test run never reuses
# a build that lets warnings through. Extra arguments go to `meson setup`.
# Usage: scripts/werror-build.sh BUILD_DIR [meson setup options...]
set -euo pipefail
build="$1"
shift
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Dwerror=true "$@"
	exit 0
fi
werror=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json, sys; print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "werror"), ""))')
if [ "$werror" != "True" ]; then
	echo "werror-build.sh: $build was configured without -Dwerror=true (werror=$werror): reconfiguring it" >&2
	meson configure "$build" -Dwerror=true
fi
