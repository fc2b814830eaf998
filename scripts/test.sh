#!/usr/bin/env bash
# test.sh - install what is missing, build with warnings as errors, run every test.
# Usage: scripts/test.sh [BUILD_DIR [extra meson setup options...]]
# GPU tests (suite 'gpu') exit 77 and count as skipped where no GPU is visible.
set -euo pipefail
cd "$(dirname "$0")/.."
NCCLTUNE_DEPS_EXTRA="${NCCLTUNE_DEPS_EXTRA:-libopenmpi-dev}" scripts/deps.sh
build="${1:-build}"
shift || true
# a build made by scripts/tune.sh (no -Werror) is reconfigured, not silently reused
scripts/werror-build.sh "$build" "$@"
meson compile -C "$build"
meson test -C "$build" --print-errorlogs --num-processes 2
