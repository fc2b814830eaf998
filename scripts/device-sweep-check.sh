#!/bin/bash
# device-sweep-check.sh - on the GPU machine: the probe's GPU suite (tests/probe/test_gpu.py:
# capabilities, --ops lists, decisions, --sweep in every launch mode, spoiled and stalled
# choices, no log folder left) plus three sample reports for a reader, all into $OUT.
#
# Run from the repository root with .carry/probe carried (scripts/device-build.sh makes
# it, the plugin included). NCCL_NVLS_ENABLE=0 for every run. Nothing here changes GPU
# settings.   usage: scripts/device-sweep-check.sh
set -u
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-$root/.carry/out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.carry/probe/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
P=$root/.carry/probe/bin/nccltune-probe
ldd "$P" | grep -q "not found" && P=$root/.carry/probe/bin/nccltune-probe-nompi
PLUGIN=$root/.carry/probe/lib/libnccl-tuner-nccltune.so
PARSE=$root/.carry/probe/bin/probe_parse_report
SWEEP=$root/tests/probe/golden/sweep-ok.json
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$P" --version
"$P" --capabilities
python3 tests/probe/test_gpu.py "$P" "$PARSE" "$PLUGIN" >"$out/test_gpu.log" 2>&1
echo "test_gpu.py: exit $? (77: no GPU); the last lines:"
tail -20 "$out/test_gpu.log"
"$P" --bytes 43008,1024 --ops 8,4 --iters 20 --warmup 2 >"$out/plain.json" 2>"$out/plain.err"
echo "plain: exit $?"; cat "$out/plain.json"
NCCL_TUNER_PLUGIN=$PLUGIN "$P" --bytes 43008,1024 --ops 8,4 --iters 30 --warmup 2 \
	--sweep "$SWEEP" >"$out/sweep.json" 2>"$out/sweep.err"
echo "sweep: exit $?"; cat "$out/sweep.json"
NCCL_TUNER_PLUGIN=$PLUGIN "$P" --bytes 43008,1024 --ops 8,4 --iters 30 --sweep "$SWEEP" \
	--launch all --test-stall-choice 1 --step-timeout 2 >"$out/stall.json" 2>"$out/stall.err"
echo "stall: exit $?"; cat "$out/stall.json"
ls -d "${TMPDIR:-/tmp}"/nccltune-probe-* 2>/dev/null && echo "LEFT OVER log folders" ||
	echo "no nccltune-probe-* folder left in ${TMPDIR:-/tmp}"
# A tuned size and a prefill-size guard in one run (--ops per size), with the plugin and
# a table, under the system's NCCL and the torch wheel's (put first on LD_LIBRARY_PATH).
TABLE=$(mktemp /tmp/nccltune-table.XXXXXX)
printf 'nccltune-tuner/1\nallreduce * * 43008 43008 ring ll 2 0\n' >"$TABLE"
TORCH_NCCL=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib
for which in system torch; do
	ldp=$LD_LIBRARY_PATH
	[ "$which" = torch ] && ldp=$TORCH_NCCL:$LD_LIBRARY_PATH
	LD_LIBRARY_PATH=$ldp NCCL_TUNER_PLUGIN=$PLUGIN NCCLTUNE_TUNER_TABLE=$TABLE timeout 300 "$P" \
		--bytes 43008,117440512 --ops 122,1 --iters 50 --warmup 5 \
		>"$out/guard-$which.json" 2>"$out/guard-$which.err"
	echo "guard, $which NCCL: exit $?"; cat "$out/guard-$which.json"
done
rm -f "$TABLE"
