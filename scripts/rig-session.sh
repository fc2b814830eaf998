#!/bin/bash
# rig-session.sh - issue 26 step (c): a default session at budget 60 on the seed workload
# (examples/kimi-k25-eagle3-verify-8xpcie.json: 122 x 43,008 B, its prefill guard
# 117,440,512 B) on the rig - nccltune-probe --launch all with NCCL 2.30.7 and two ranks on
# the GPU (nccltune run --nccl ... --ranks-per-gpu 2) - with the seed's hand configuration
# as --try. Writes $OUT/results/<gpu>-2ranks-<date>/session/: session.txt (run with
# /usr/bin/time, show, check, export --format nccl-tuner), session.tar.gz (the folder:
# journal, results.json, exports, report.html), summary.json (--json). The session folder
# stays at /tmp/sessions/rig-session for scripts/rig-client.sh on the same warm machine.
#   command: scripts/rig-session.sh [BUDGET] [TIME_LIMIT|none]   carry: [".carry/probe", "rig"]
# Defaults: budget 60, --time-limit 6m (the session then runs its final rounds and ends;
# the device allows 10 minutes a call): about 7-8 minutes. TIME_LIMIT none: no limit; the
# call's own timeout (RIG_TIMEOUT, default 540 s) stops the session (SIGTERM: journalled,
# exit 130) and a later call resumes it:
#   scripts/rig-session.sh resume
# which continues /tmp/sessions/rig-session on the same warm machine, or, on a fresh one,
# the folder a previous call returned (session.tar.gz) unpacked into the checkout's
# git-ignored .carry/rig-session/ and carried (carry: [..., ".carry/rig-session"]).
# RIG_ITERS=N: the workload with "iters": N (replays per measurement; the probe's default
# is 200): a sweep of 71 choices takes 34-37 s on the rig at 200, so a budget-60 session
# does not fit the device's 30 minutes without fewer. Said in run.log.
# RIG_RUN_ARGS="...": more nccltune run options for a new session (e.g. --compute-us 16).
set -u
. "$(dirname "$0")/rig-lib.sh"
rig_result_dir session
dir=/tmp/sessions/rig-session
mkdir -p /tmp/sessions
if [ "${1:-}" = resume ]; then
	if [ ! -f "$dir/journal.jsonl" ] && [ -f "$root/.carry/rig-session/rig-session/journal.jsonl" ]; then
		rm -rf "$dir"
		cp -a "$root/.carry/rig-session/rig-session" "$dir"
		rm -f "$dir/.lock"
		note "resume: the session folder carried from a previous call"
	fi
	args=(--resume "$dir")
else
	budget=${1:-60}
	limit=${2:-6m}
	wl=examples/kimi-k25-eagle3-verify-8xpcie.json
	if [ -n "${RIG_ITERS:-}" ]; then
		case $RIG_ITERS in *[!0-9]*|'') echo "$0: RIG_ITERS=$RIG_ITERS: a number" >&2; exit 2 ;; esac
		python3 -c 'import json,sys; w=json.load(open(sys.argv[1])); w["iters"]=int(sys.argv[2]); json.dump(w, open(sys.argv[3], "w"))' \
			"$wl" "$RIG_ITERS" /tmp/sessions/rig-workload.json || exit 1
		wl=/tmp/sessions/rig-workload.json
		note "workload: $RIG_ITERS replays per measurement (RIG_ITERS; the probe's default is 200)"
	fi
	rm -rf "$dir"
	args=(--probe "$P --launch all" --nccl "$LIB230" --ranks-per-gpu 2
		--workload "$wl" --budget "$budget" --seed 1 --try "$HAND" --out "$dir")
	[ "$limit" = none ] || args+=(--time-limit "$limit")
	if [ -n "${RIG_RUN_ARGS:-}" ]; then
		read -r -a more <<<"$RIG_RUN_ARGS"
		args+=("${more[@]}")
		note "nccltune run options added (RIG_RUN_ARGS): $RIG_RUN_ARGS"
	fi
fi
{
	echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) nccltune run ${args[*]}"
	NCCL_NVLS_ENABLE=0 /usr/bin/time -v timeout "${RIG_TIMEOUT:-540}" "$bin/nccltune" run "${args[@]}" --json \
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
