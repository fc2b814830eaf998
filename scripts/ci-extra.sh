#!/usr/bin/env bash
# ci-extra.sh - pass 3 of .ci/run: the checks too slow or too tool-specific for the meson
# suites.
#  1. fuzzing: every parser of outside data (tests/reliability/fuzz) built with clang's
#     libFuzzer + ASan + UBSan and fuzzed for a bounded time from its committed corpus;
#  2. valgrind memcheck over an end-to-end session (tuner and probe) and the commands
#     that read its results;
#  3. long end-to-end cases that wait on real time (tests/session/test_guards_sweep.py's
#     time-limit case).
# Each step is one test. The last line is exactly "ci-extra: N passed, N failed, N skipped".
#
# Environment: NCCLTUNE_FUZZ_SECONDS (per target, default 15), NCCLTUNE_FUZZ_BUILD
# (default build-rel-fuzz), NCCLTUNE_VALGRIND_BUILD (default build-ci when .ci/run made
# it, else build-rel). A crash found by fuzzing is kept under $NCCLTUNE_FUZZ_BUILD/artifacts/.
set -uo pipefail
cd "$(dirname "$0")/.."

fuzz_seconds="${NCCLTUNE_FUZZ_SECONDS:-15}"
fuzz_build="${NCCLTUNE_FUZZ_BUILD:-build-rel-fuzz}"
if [ -n "${NCCLTUNE_VALGRIND_BUILD:-}" ]; then
	vg_build="$NCCLTUNE_VALGRIND_BUILD"
elif [ -f build-ci/build.ninja ] && [ "$(python3 -c '
import json, sys
opts = json.load(open(sys.argv[1]))
print(next((o["value"] for o in opts if o["name"] == "b_sanitize"), "none"))' \
	build-ci/meson-info/intro-buildoptions.json 2>/dev/null)" = none ]; then
	# .ci/run pass 1 built it without sanitizers: reuse it (valgrind and ASan do not mix)
	vg_build=build-ci
else
	vg_build=build-rel
fi
passed=0 failed=0 skipped=0
work=$(mktemp -d /tmp/nccltune-ci-extra-XXXXXX)
trap 'rm -rf "$work"' EXIT

# Record one test: result NAME STATUS [WHY]; status 0 passes, 77 skips, anything else fails.
result() {
	case "$2" in
	0) passed=$((passed + 1)); echo "ci-extra: PASS $1" ;;
	77) skipped=$((skipped + 1)); echo "ci-extra: SKIP $1${3:+: $3}" ;;
	*) failed=$((failed + 1)); echo "ci-extra: FAIL $1${3:+: $3}" ;;
	esac
}

fuzz_targets=$(ls tests/reliability/fuzz/corpus)

# ---- 1. fuzzing ----
fuzz_ok=1
fuzz_why=""
if ! command -v clang >/dev/null 2>&1; then
	fuzz_ok=0 fuzz_why="clang not installed"
elif ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
	clang -x c -fsanitize=fuzzer -o "$work/probe-libfuzzer" - >/dev/null 2>&1; then
	fuzz_ok=0 fuzz_why="clang cannot link libFuzzer (libclang-rt-14-dev missing?)"
fi
if [ "$fuzz_ok" = 1 ]; then
	echo "== fuzz build ($fuzz_build)"
	# -fsanitize=fuzzer-no-link instruments every library for coverage; only the fuzz
	# targets themselves link libFuzzer. The probe (CUDA) is not needed here.
	if [ ! -f "$fuzz_build/build.ninja" ]; then
		CC=clang CFLAGS="-fsanitize=fuzzer-no-link" meson setup "$fuzz_build" -Dfuzz=true \
			-Db_sanitize=address,undefined -Db_lundef=false -Dprobe=disabled -Dmpi=disabled \
			>"$work/fuzz-setup.log" 2>&1 || { cat "$work/fuzz-setup.log"; fuzz_ok=0; fuzz_why="meson setup failed"; }
	fi
fi
if [ "$fuzz_ok" = 1 ]; then
	targets=""
	for t in $fuzz_targets; do targets="$targets fuzz_$t"; done
	# shellcheck disable=SC2086
	if ! meson compile -C "$fuzz_build" $targets >"$work/fuzz-build.log" 2>&1; then
		tail -40 "$work/fuzz-build.log"
		fuzz_ok=0 fuzz_why="fuzz targets failed to build"
	fi
fi
mkdir -p "$fuzz_build/artifacts" 2>/dev/null
for t in $fuzz_targets; do
	if [ "$fuzz_ok" = 0 ]; then
		# a missing toolchain skips; a broken build fails
		case "$fuzz_why" in
		*failed*) result "fuzz-$t" 1 "$fuzz_why" ;;
		*) result "fuzz-$t" 77 "$fuzz_why" ;;
		esac
		continue
	fi
	exe=$(find "$fuzz_build" -name "fuzz_$t" -type f -perm -u+x | head -1)
	new="$work/new-$t"
	mkdir -p "$new"
	# New inputs go to a scratch folder (first argument), never into the repository.
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$exe" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$fuzz_build/artifacts/$t-" \
		"$new" "tests/reliability/fuzz/corpus/$t" >"$work/fuzz-$t.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz-$t.log" | tail -1)
	if [ "$rc" = 0 ]; then
		result "fuzz-$t" 0
		echo "   ${runs:-?} inputs in ${fuzz_seconds}s"
	else
		tail -60 "$work/fuzz-$t.log"
		result "fuzz-$t" 1 "libFuzzer exit $rc; crashing input in $fuzz_build/artifacts/ (replay: $exe FILE)"
	fi
done

# ---- 2. valgrind ----
vg() {
	valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect --track-origins=yes "$@"
}
vg_ok=1 vg_why=""
if ! command -v valgrind >/dev/null 2>&1; then
	vg_ok=0 vg_why="valgrind not installed"
elif [ ! -f "$vg_build/build.ninja" ]; then
	echo "== valgrind build ($vg_build)"
	meson setup "$vg_build" -Dwerror=true >"$work/vg-setup.log" 2>&1 ||
		{ cat "$work/vg-setup.log"; vg_ok=0; vg_why="meson setup failed"; }
fi
if [ "$vg_ok" = 1 ] && ! meson compile -C "$vg_build" >"$work/vg-build.log" 2>&1; then
	tail -40 "$work/vg-build.log"
	vg_ok=0 vg_why="build failed"
fi
tuner="$vg_build/cli/nccltune"
model="$vg_build/models/nccltune-model-probe"
faultprobe="$vg_build/tests/reliability/faultprobe"

vg_test() {   # vg_test NAME COMMAND...: a test that must finish with no valgrind error
	local name=$1
	shift
	if [ "$vg_ok" = 0 ]; then
		case "$vg_why" in
		*failed*) result "$name" 1 "$vg_why" ;;
		*) result "$name" 77 "$vg_why" ;;
		esac
		return
	fi
	if "$@" >"$work/$name.log" 2>&1; then
		result "$name" 0
	else
		local rc=$?
		tail -60 "$work/$name.log"
		result "$name" 1 "exit $rc (99: valgrind found errors)"
	fi
}

if [ -x "$model" ]; then
	probe_cmd="$model --model pcie-gen5-8gpu"
else
	probe_cmd="$faultprobe --mode random --seed 3"
fi
session="$work/vg-session"
# The tuner under memcheck, for a whole session; its probes run natively (they are
# checked one by one below).
vg_test valgrind-session vg "$tuner" run --probe "$probe_cmd" --budget 8 --seed 1 \
	--out "$session" --timeout 30
vg_test valgrind-show vg "$tuner" show "$session"
vg_test valgrind-export vg "$tuner" export "$session" --format shell
vg_test valgrind-faults vg "$tuner" run --probe "$faultprobe --mode random --seed 5" \
	--budget 10 --seed 2 --out "$work/vg-faults" --timeout 2
if [ -x "$model" ] || [ "$vg_ok" = 0 ]; then
	vg_test valgrind-model-probe vg "$model" --model pcie-gen5-8gpu --iters 5
else
	result valgrind-model-probe 77 "no model probe in $vg_build"
fi
vg_test valgrind-faultprobe vg "$faultprobe" --mode wrong-sum --bytes 43008,1M

# ---- 3. long end-to-end cases ----
# Cases that wait on real time (a --time-limit session and its resume, 12 s each), too
# long for the meson suites on a loaded machine; run on the valgrind pass's build
# (natively).
e2e_ok=1
if [ ! -f "$vg_build/build.ninja" ]; then
	meson setup "$vg_build" -Dwerror=true >"$work/e2e-setup.log" 2>&1 ||
		{ cat "$work/e2e-setup.log"; e2e_ok=0; }
fi
if [ "$e2e_ok" = 1 ] && ! meson compile -C "$vg_build" >"$work/e2e-build.log" 2>&1; then
	tail -40 "$work/e2e-build.log"
	e2e_ok=0
fi
e2e_test() {   # e2e_test NAME COMMAND...: a test that must exit 0 (77: skipped)
	local name=$1 rc
	shift
	if [ "$e2e_ok" = 0 ]; then
		result "$name" 1 "the build $vg_build failed"
		return
	fi
	"$@" >"$work/$name.log" 2>&1
	rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 77 ] || tail -60 "$work/$name.log"
	result "$name" "$rc"
}
e2e_test session-guards-time-limit env XDG_STATE_HOME="$work/state" python3 \
	tests/session/test_guards_sweep.py "$vg_build/cli/nccltune" tests/session/sweep_wrapper.py \
	"$vg_build/models/nccltune-model-probe" "$vg_build/plugin/libnccl-tuner-nccltune.so" time-limit

echo "ci-extra: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
