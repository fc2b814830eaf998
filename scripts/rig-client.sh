#!/bin/bash
# rig-client.sh - issue 26 step (d): the real client on the rig. examples/client/
# verify_step.py under torchrun with 2 ranks on the one GPU (torch loading NCCL 2.30.7
# through LD_PRELOAD, NCCL_MULTI_RANK_GPU_ENABLE=1, the MPS daemon started), via
# examples/client/compare.py: NCCL's defaults, the session's result installed with
# `nccltune export --install --python /opt/torch/.venv/bin/python3`, and the seed's hand
# configuration, interleaved rounds, next to the session's predicted ratios; NCCL's log
# lines (--nccl-debug) prove the plugin and the table loaded in that process.
# Writes $OUT/results/<gpu>-2ranks-<date>/client/: install.txt, compare.txt, compare.json.
#   command: scripts/rig-client.sh [SESSION_DIR]   carry: [".carry/probe", "rig"]
# SESSION_DIR default /tmp/sessions/rig-session (scripts/rig-session.sh on the same warm
# machine); when it is missing, a budget-8 session runs here first (about 2 minutes).
# About 3-5 minutes.
set -u
. "$(dirname "$0")/rig-lib.sh"
rig_result_dir client
sess=${1:-/tmp/sessions/rig-session}
if [ ! -f "$sess/results.json" ]; then
	sess=/tmp/sessions/rig-client-session
	rm -rf "$sess"
	NCCL_NVLS_ENABLE=0 timeout 240 "$bin/nccltune" run --probe "$P --launch all" --nccl "$LIB230" \
		--ranks-per-gpu 2 --workload examples/kimi-k25-eagle3-verify-8xpcie.json --budget 8 \
		--seed 1 --try "$HAND" --out "$sess" >"$res/session.txt" 2>&1
	note "no session given: a budget-8 session ran here: exit $? ($sess)"
fi
"$bin/nccltune" export --install --python "$TORCH_PY" "$sess" >"$res/install.txt" 2>&1
note "install into $TORCH_PY: exit $? ($(tail -1 "$res/install.txt"))"
mps_start
# compare.py removes the caller's NCCL_* variables unless --keep-env: keep exactly the two
# the rig needs, the same in every condition
for v in $(env | sed -n 's/^\(NCCL_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export NCCL_MULTI_RANK_GPU_ENABLE=1 NCCL_NVLS_ENABLE=0 LD_PRELOAD=$LIB230
# NCCLTUNE_OFF=1: compare.py runs under the interpreter nccltune was just installed into;
# without it the installed block sets the tuned variables in compare.py's own process and
# every condition, 'defaults' included, inherits them (compare.py refuses that)
NCCLTUNE_OFF=1 timeout 500 "$TORCH_PY" examples/client/compare.py --python "$TORCH_PY" --nproc 2 --keep-env \
	--session "$sess" --try "$HAND" --rounds 3 --nccl-debug --json "$res/compare.json" \
	-- --replays 20 --rounds 3 >"$res/compare.txt" 2>&1
note "compare.py: exit $?"
unset LD_PRELOAD
mps_stop
grep -E "TUNER/Plugin|nccltune:|NCCL version|NCCL ran" "$res/compare.txt" | sort | uniq -c | head -10 | tee -a "$res/run.log"
tail -20 "$res/compare.txt"
"$bin/nccltune" uninstall --python "$TORCH_PY" >>"$res/install.txt" 2>&1
note "uninstall: exit $?"
cat "$res/run.log"
