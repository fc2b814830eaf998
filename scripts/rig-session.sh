#!/bin/bash
# rig-session.sh - issue 26 step (c): a default session at budget 60 on the seed workload
# (examples/kimi-k25-eagle3-verify-8xpcie.json: 122 x 43,008 B, its prefill guard
# 117,440,512 B) on the rig - nccltune-probe --launch all with NCCL 2.30.7 and two ranks on
# the GPU (nccltune run --nccl ... --ranks-per-gpu 2) - with the seed's hand configuration
# as --try. Writes $OUT/results/<gpu>-2ranks-<date>/session/: session.txt (run with
# /usr/bin/time, show, check, export --format nccl-tuner), session.tar.gz (the folder:
# journal, results.json, exports, report.html), summary.json (--json). The session folder
# stays at /tmp/sessions/rig-session for scripts/rig-client.sh on the same warm machine.
#   command: scripts/rig-session.sh [BUDGET] [TIME_LIMIT]   carry: [".carry/probe", "rig"]
# Defaults: budget 60, --time-limit 6m (the session then runs its final rounds and ends;
# the device allows 10 minutes a call): about 7-8 minutes. A cut session resumes with
#   scripts/rig-session.sh resume
set -u
. "$(dirname "$0")/rig-lib.sh"
rig_result_dir session
dir=/tmp/sessions/rig-session
mkdir -p /tmp/sessions
if [ "${1:-}" = resume ]; then
	args=(--resume "$dir")
else
	budget=${1:-60}
	limit=${2:-6m}
	rm -rf "$dir"
	args=(--probe "$P --launch all" --nccl "$LIB230" --ranks-per-gpu 2
		--workload examples/kimi-k25-eagle3-verify-8xpcie.json --budget "$budget"
		--time-limit "$limit" --seed 1 --try "$HAND" --out "$dir")
fi
{
	echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) nccltune run ${args[*]}"
	NCCL_NVLS_ENABLE=0 /usr/bin/time -v timeout 560 "$bin/nccltune" run "${args[@]}" --json \
		>"$res/summary.json"
	echo "exit $?"
	echo "== nccltune show"
	"$bin/nccltune" show "$dir"
	echo "== nccltune check (same machine: expect exit 0)"
	"$bin/nccltune" check "$dir"
	echo "exit $?"
	echo "== nccltune export --format nccl-tuner"
	"$bin/nccltune" export --format nccl-tuner "$dir"
} >"$res/session.txt" 2>&1
tar -C /tmp/sessions -czf "$res/session.tar.gz" rig-session
grep -E "^exit|baseline:|best:|gain:|pruned:|not recommended|try|guard|Elapsed" "$res/session.txt" | head -40
cat "$res/run.log"
