#!/usr/bin/env bash
# tune.sh - install what is missing, build, and run a tuning session: on the GPUs of
# this machine when any are visible, otherwise on the built-in MODEL of the 8-GPU PCIe
# box (labelled as a model everywhere its numbers appear). Extra arguments go to
# `nccltune run` (e.g. --budget 40, --workload examples/kimi-k25-eagle3-verify-8xpcie.json).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build="${NCCLTUNE_BUILD:-build}"
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
meson compile -C "$build" >/dev/null
exec "$build/cli/nccltune" run "$@"
