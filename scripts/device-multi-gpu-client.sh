#!/bin/bash
# device-multi-gpu-client.sh - issue 19 step 4: the PyTorch verify step (examples/client/
# verify_step.py) under torchrun on every GPU, via examples/client/compare.py: NCCL's
# defaults, the tuned result installed into the torch interpreter (nccltune export
# --install --python), the seed's hand configuration (--try), interleaved rounds, next to
# the session's predicted ratios; the compute gap and symmetric memory where this build has
# them (checked in --help: "not available in this build" otherwise). The eager prefill
# all-reduce is measured by verify_step.py itself (--prefill-bytes).
# Writes $OUT/results/<kind>-<date>/client/.
#   command: scripts/device-multi-gpu-client.sh [SESSION_DIR]   carry: [".carry/probe"]
# SESSION_DIR: a session folder (default: a budget-20 session of the seed workload run
# here first; run scripts/device-multi-gpu-sessions.sh for the real one).
set -u
. "$(dirname "$0")/device-lib.sh"
result_dir client
hand=$HAND
sess=${1:-}
if [ -z "$sess" ]; then
	sess=/tmp/sessions/client-$kind
	OUT=$res scripts/device-session.sh "client-$kind" --workload examples/kimi-k25-eagle3-verify-8xpcie.json \
		--budget 20 --seed 1 >/dev/null 2>&1
	note "session for the client (budget 20): $(grep -E '^exit' "$res/client-$kind.txt" | head -1)"
fi
"$bin/nccltune" export --install --python "$TORCH_PY" "$sess" >"$res/install.txt" 2>&1
note "install into $TORCH_PY: exit $? ($(tail -1 "$res/install.txt"))"
extra=()
if need_option "compute gap" "$TORCH_PY" examples/client/verify_step.py --compute-us; then
	extra+=(--compute-us 20)
fi
NCCLTUNE_OFF=1 timeout 590 "$TORCH_PY" examples/client/compare.py --python "$TORCH_PY" --nproc "$ngpu" \
	--session "$sess" --try "$hand" --rounds 3 --nccl-debug --json "$res/compare.json" \
	-- --replays 20 --rounds 3 "${extra[@]}" >"$res/compare.txt" 2>&1
note "compare.py: exit $?"
tail -20 "$res/compare.txt"
if need_option "symmetric memory (probe)" "$P" --window; then
	NCCL_TUNER_PLUGIN=$PLUGIN timeout 300 "$P" --window symmetric --bytes 43008 --ops 122 \
		>"$res/probe-symmetric.json" 2>"$res/probe-symmetric.err"
	note "probe --window symmetric: exit $?"
fi
"$bin/nccltune" uninstall --python "$TORCH_PY" >>"$res/install.txt" 2>&1
note "uninstall: exit $?"
cat "$res/run.log"
