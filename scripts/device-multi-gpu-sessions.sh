#!/bin/bash
# device-multi-gpu-sessions.sh - issue 19 step 3: the seed workload (122 x 43,008 B) at
# budget 60 with a prefill guard (117,440,512 B), over NVLink and with NCCL_P2P_DISABLE=1,
# with the seed's hand configuration (--try); the default space (per-size + sweep where this
# build has them), and the old global-variable space (today's best, to show what a guard
# prevents: its guard ratio is measured by a plain probe run of the best env at 117 MB).
# Writes $OUT/results/<kind>-<date>/sessions/<name>.{txt,tar.gz} (scripts/device-session.sh)
# and guard-<name>.json.
#   command: scripts/device-multi-gpu-sessions.sh [BUDGET]   carry: [".carry/probe"]
set -u
. "$(dirname "$0")/device-lib.sh"
result_dir sessions
budget=${1:-60}
hand=$HAND
guard=()
if need_option "prefill guard" "$bin/nccltune" run --guard; then guard=(--guard 117440512); fi
"$P" --capabilities | grep -q '"sweep"' && note "probe capabilities: $("$P" --capabilities)" ||
	note "this probe cannot sweep: sessions run one configuration per process"
cat >"$res/space-global.json" <<'JSON'
{"schema": "nccltune-space/1",
 "params": {
   "NCCL_PROTO": {"values": ["LL", "LL128", "Simple", null]},
   "NCCL_ALGO": {"values": ["Ring", "Tree", null]},
   "NCCL_MIN_NCHANNELS": {"int": [1, 32]},
   "NCCL_MAX_NCHANNELS": {"int": [1, 32]},
   "NCCL_BUFFSIZE": {"pow2": [65536, 16777216]},
   "NCCL_NTHREADS": {"values": [64, 128, 256, 512, null]}},
 "fixed": {"NCCL_NVLS_ENABLE": "0"},
 "constraints": ["NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS"]}
JSON
for path in nvlink p2p-disabled; do
	for space in default global; do
		name=$kind-$path-$space
		sp=()
		[ $space = global ] && sp=(--space "$res/space-global.json")
		p2p=()
		[ $path = p2p-disabled ] && p2p=(NCCL_P2P_DISABLE=1)
		env "${p2p[@]}" OUT="$res" scripts/device-session.sh "$name" "${sp[@]}" "${guard[@]}" \
			--workload examples/kimi-k25-eagle3-verify-8xpcie.json --budget "$budget" --seed 1 \
			--try "$hand" >/dev/null 2>&1
		note "$name: $(grep -E '^exit' "$res/$name.txt" | head -1)"
		# The best env's latency at the guard size next to the defaults' (plain runs).
		best=$("$bin/nccltune" export --format shell "/tmp/sessions/$name" 2>/dev/null |
			sed -n 's/^export //p' | tr -d "'\"" | grep '^NCCL' | tr '\n' ' ')
		for cond in default best; do
			vars=()
			[ $cond = best ] && read -r -a vars <<<"$best"
			env "${p2p[@]}" "${vars[@]}" timeout 300 "$P" --bytes 117440512 --ops 1 --iters 20 \
				>"$res/guard-$name-$cond.json" 2>"$res/guard-$name-$cond.err"
		done
		note "$name guard 117440512 B: default $(grep -o '"median":[0-9.e+-]*' "$res/guard-$name-default.json" | head -1), best ($best) $(grep -o '"median":[0-9.e+-]*' "$res/guard-$name-best.json" | head -1)"
	done
done
cat "$res/run.log"
