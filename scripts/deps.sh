#!/usr/bin/env bash
# deps.sh - install what nccltune needs on a Debian/Ubuntu machine (idempotent).
# Build: meson, ninja, pkg-config, gcc. Libraries: cJSON (JSON), GSL (linear algebra,
# statistics, Sobol sequences, random numbers), NLopt (Nelder-Mead and GP
# hyper-parameter fitting). Open MPI is optional (the probe's MPI launch mode); clang's
# runtime gives the libFuzzer targets; Chromium (NCCLTUNE_DEPS_EXTRA in .ci/run) lets
# the report's screenshot test run. CUDA and NCCL are not installed here: the probe
# is built when they are found (see README).
set -euo pipefail
pkgs=(meson ninja-build pkg-config gcc libcjson-dev libgsl-dev libnlopt-dev python3)
[ "${NCCLTUNE_DEPS_EXTRA:-}" ] && read -r -a extra <<<"$NCCLTUNE_DEPS_EXTRA" && pkgs+=("${extra[@]}")
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	echo "deps.sh: installing ${missing[*]}" >&2
	# apt is quiet unless it fails: its output goes to a log, shown only then
	log=$(mktemp "${TMPDIR:-/tmp}/nccltune-deps-XXXXXX.log")
	if ! { $sudo apt-get update -qq &&
	       DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
	           "${missing[@]}"; } >"$log" 2>&1; then
		echo "deps.sh: apt-get failed installing ${missing[*]}; its output:" >&2
		cat "$log" >&2
		rm -f "$log"
		exit 1
	fi
	rm -f "$log"
fi
