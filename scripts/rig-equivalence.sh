#!/bin/bash
# rig-equivalence.sh - issue 26 step (b): sweep vs fresh plugin-deployed process at nranks 2
# on the one GPU (NCCL 2.30.7). The 24 default choices (Ring/Tree x LL/LL128/Simple x
# 1/2/4/8 CTAs at 43,008 B, 122 ops) are measured in one sweeping probe process and each
# in a fresh probe process deployed through nccltune's plugin (a one-rule table),
# interleaved over R repeats (bench/sweep_equivalence.py): per choice the ratio
# sweep/fresh with its 95% interval, the Spearman rank correlation, inversions beyond
# noise, what NCCL ran in each arm, and each arm's probe wall time (wall_s). The probe
# runs --launch all --ranks-per-gpu 2 (one process, no MPS).
# Writes $OUT/results/<gpu>-2ranks-<date>/equivalence/{table.txt,equivalence.json,work/}.
#   command: scripts/rig-equivalence.sh [REPEATS]   carry: [".carry/probe", "rig"]
# REPEATS default 3: about 4-6 minutes (72 fresh processes of ~2-3 s, 3 sweeps).
set -u
. "$(dirname "$0")/rig-lib.sh"
rig_result_dir equivalence
repeats=${1:-3}
mkdir -p "$res/work"
timeout 500 python3 bench/sweep_equivalence.py --probe "$P" --plugin "$PLUGIN" \
	--bytes 43008 --ops 122 --repeats "$repeats" --iters 200 --rounds 5 \
	--probe-arg=--nccl "--probe-arg=$LIB230" --probe-arg=--ranks-per-gpu --probe-arg=2 \
	--probe-arg=--launch --probe-arg=all --probe-arg=--gpus --probe-arg=1 \
	--work "$res/work" --json "$res/equivalence.json" >"$res/table.txt" 2>>"$res/run.log"
note "sweep_equivalence.py: exit $? (0 every run worked, 1 a probe run failed, 124 timed out)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("probe wall time per arm (s):", d.get("wall_s"))' \
	"$res/equivalence.json" 2>&1 | tee -a "$res/run.log"
cat "$res/table.txt"
tail -5 "$res/run.log"
