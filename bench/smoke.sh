#!/bin/sh
# smoke.sh SEARCH_EFFICIENCY OVERHEAD SPACE [SESSION_REGRET_PY BUILD_ROOT] - the bench-smoke
# test: the benchmark programs run a tiny configuration, exit 0 and print their tables (with
# the last two arguments, bench/session_regret.py too: two short whole sessions). No timing
# is checked: benchmark numbers belong in results/bench-<date>.md (bench/run.sh), not in a
# pass/fail test.
set -u
search=$1 overhead=$2 small_space=$3 session_regret=${4:-} build_root=${5:-}
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
fail=0

expect() {   # expect TEXT: the last program's output contains TEXT
	if ! grep -qF -- "$1" "$out"; then
		echo "bench-smoke: expected '$1' in the output:" >&2
		cat "$out" >&2
		fail=1
	fi
}

if ! "$search" --model pcie-gen5-8gpu --strategy random --strategy bo --seeds 1 \
		--space "$small_space" \
		--budget 20 >"$out"; then
	echo "bench-smoke: $search failed" >&2
	exit 1
fi
expect "| pcie-gen5-8gpu | bo |"
expect "| pcie-gen5-8gpu | random |"
expect "Regret ratio against random"
expect "MODEL numbers"

if ! "$overhead" --strategy random --strategy bo --obs 20 --reps 1 --session-budget 5 \
		--eval-reps 10 >"$out"; then
	echo "bench-smoke: $overhead failed" >&2
	exit 1
fi
expect "| random |"
expect "| bo |"
expect "MEASURED on this CPU"
expect "The model's own cost in-process"

if ! "$overhead" --long-only --strategy bo --long-budget 8 --long-budget 12 --long-seeds 2 \
		--jobs 2 >"$out"; then
	echo "bench-smoke: $overhead --long-only failed" >&2
	exit 1
fi
expect "### Long sessions"
expect "| pcie-gen5-8gpu | bo | 2 |"
expect "| pcie-gen5-8gpu | bo | **median** |"
expect "regret@12"
if "$overhead" --long-budget 12 --long-budget 8 >"$out" 2>&1; then
	echo "bench-smoke: decreasing --long-budget values were accepted" >&2
	fail=1
fi
expect "--long-budget: 8 is not above 12"

if "$search" --seeds 0 >"$out" 2>&1; then
	echo "bench-smoke: --seeds 0 was accepted" >&2
	fail=1
fi
expect "--seeds: '0' is not an integer in 1..1000"

if [ -n "$session_regret" ]; then
	if ! python3 "$session_regret" --build "$build_root" --model pcie-4gpu-switch \
			--strategy bo --strategy random --seeds 1 --budget 12 --jobs 1 >"$out"; then
		echo "bench-smoke: $session_regret failed" >&2
		exit 1
	fi
	expect "| pcie-4gpu-switch | bo |"
	expect "| pcie-4gpu-switch | random |"
	expect "| model | random/bo, medians |"
	expect "Targets, whole sessions (MODEL numbers; at 12 runs)"
	expect "1 models x 2 strategies x 1 seeds, budget 12"
	if python3 "$session_regret" --build "$build_root/no-such-folder" >"$out" 2>&1; then
		echo "bench-smoke: session_regret.py ran without a build" >&2
		fail=1
	fi
	expect "no-such-folder/cli/nccltune is not built"
fi
exit $fail
