#!/bin/bash
# device-verify.sh - on the GPU machine: `nccltune verify` against real NCCL started in
# PyTorch's interpreter (issue 27): torch's own NCCL at one rank, and NCCL 2.30.7 at two
# ranks on one GPU (NCCL_MULTI_RANK_GPU_ENABLE=1, LD_PRELOAD through verify's --nccl),
# each deployed by an env file naming the plugin and a table with a rule for 43008 B
# (nranks *): exit 0 and NCCL's own lines (version, "TUNER/Plugin: Using nccltune (vN)",
# the plugin's table and applied lines, at two ranks "AllReduce: 43008 Bytes -> Algo RING
# proto LL"); then a missing table (exit 5, the plugin's WARN inside NCCL) and no plugin
# at all (exit 5); then a pth install in a venv made from torch's interpreter (torch's
# site-packages added by a .pth), verified through that interpreter's start-up.
#
# Run from the repository root with .carry/probe carried (scripts/device-build.sh) and
# the NCCL 2.30.7 library unpacked (../shared/tools/nccl-2.30.7/setup.sh).
#   usage: scripts/device-verify.sh LIBNCCL_2_30_7 [PYTHON]
#     LIBNCCL_2_30_7: the libnccl.so.2 of NCCL 2.30.7 (or its folder)
#     PYTHON: the server's interpreter (default /opt/torch/.venv/bin/python3)
# Writes $OUT/verify.txt (everything, with a PASS/FAIL line per step) and exits 1 when a
# step did not do what it should. NCCL_NVLS_ENABLE=0 always.
set -u
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
lib=${1:?usage: scripts/device-verify.sh LIBNCCL_2_30_7 [PYTHON]}
[ -d "$lib" ] && lib=$lib/libnccl.so.2
[ -f "$lib" ] || { echo "device-verify.sh: $lib: no such file" >&2; exit 2; }
py=${2:-/opt/torch/.venv/bin/python3}
out=${OUT:-$root/.carry/out}
mkdir -p "$out"
log=$out/verify.txt
: >"$log"
bin=$root/.carry/probe/bin
NT=$bin/nccltune
plugin=$root/.carry/probe/lib/libnccl-tuner-nccltune.so
export LD_LIBRARY_PATH="$root/.carry/probe/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -x "$NT" ] && [ -x "$bin/nccltune-plugin-load" ] ||
	{ echo "device-verify.sh: run scripts/device-build.sh first (no $NT or nccltune-plugin-load)" >&2; exit 2; }
w=$(mktemp -d /tmp/nccltune-verify.XXXXXX)
bad=0
say() { echo "$*" | tee -a "$log"; }
# step NAME WANT_EXIT PATTERN... -- ARGS: run verify, check the exit and each pattern
step() {
	local name=$1 want=$2 rc=0 pats=()
	shift 2
	while [ "$1" != -- ]; do pats+=("$1"); shift; done
	shift
	say "== $name: nccltune verify $*"
	timeout 500 "$NT" verify "$@" >"$w/out" 2>&1 || rc=$?
	cat "$w/out" >>"$log"
	local ok=1
	[ "$rc" = "$want" ] || { ok=0; say "   exit $rc, wanted $want"; }
	for p in "${pats[@]}"; do
		grep -qE -- "$p" "$w/out" || { ok=0; say "   missing: $p"; }
	done
	if [ $ok = 1 ]; then say "PASS $name"; else say "FAIL $name"; bad=1; fi
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$log" 2>&1
say "python: $py; NCCL 2.30.7: $lib; nccltune: $("$NT" --version 2>&1)"

printf 'nccltune-tuner/1\nallreduce * * 43008 43008 ring ll 2 0\n' >"$w/rules.table"
printf 'NCCL_TUNER_PLUGIN=%s\nNCCLTUNE_TUNER_TABLE=%s\n' "$plugin" "$w/rules.table" >"$w/ok.env"
printf 'NCCL_TUNER_PLUGIN=%s\nNCCLTUNE_TUNER_TABLE=%s\n' "$plugin" "$w/missing.table" >"$w/missing.env"

# 1. torch's own NCCL, one rank: NCCL loads the plugin at init and the plugin reads its table
step "torch's NCCL, 1 rank" 0 "^NCCL started: version 2\.[0-9]+" \
	"TUNER/Plugin: Using nccltune \(v[456]\)" "^table: $w/rules.table, 1 rule" -- \
	--python "$py" --env-file "$w/ok.env"
# 2. NCCL 2.30.7, two ranks on one GPU: NCCL asks the plugin and runs the rule
NCCL_MULTI_RANK_GPU_ENABLE=1 step "NCCL 2.30.7, 2 ranks on one GPU" 0 \
	"^NCCL started: version 2\.30\.7" "TUNER/Plugin: Using nccltune \(v6\)" \
	"^the plugin inside NCCL: 43008 B -> Ring/LL, 2 CTAs" \
	"^NCCL ran: .*43008 Bytes -> Algo RING proto LL" -- \
	--python "$py" --nccl "$lib" --ranks 2 --env-file "$w/ok.env"
# 3. a missing table: the plugin's WARN inside NCCL, exit 5
NCCL_MULTI_RANK_GPU_ENABLE=1 step "missing table under NCCL 2.30.7" 5 \
	"^FAIL: table unreadable: .*table ignored" -- \
	--python "$py" --nccl "$lib" --ranks 2 --env-file "$w/missing.env"
# 4. no plugin named, but a session that needs it: the rules fixture, with a journal whose
#    first NCCL-defaults run measured 8 ranks, so that its rules name nranks 8 (a rule
#    names the ranks the session measured on, '*' without a journal: issue 31 C2)
cp -R tests/workflows/data/rules "$w/sess"
python3 - tests/workflows/data/measured/journal.jsonl "$w/sess/journal.jsonl" <<'EOF2'
import json, sys
head = open(sys.argv[1]).readline()
run = {"type": "run", "run": 1, "phase": "baseline", "point": None, "env": {}, "outcome": "ok",
       "objective_us": 24400.0, "wall_s": 3.1, "exit_status": 0, "signal": 0, "error": "",
       "stderr_tail": "", "report": {"nranks": 8}}
open(sys.argv[2], "w").write(head + json.dumps(run) + "\n")
EOF2
if "$NT" export --format nccl-tuner "$w/sess" >"$w/sess8.table" 2>>"$log" &&
	grep -qE '^allreduce +8 ' "$w/sess8.table" && ! grep -qE '^allreduce +[^8 ]' "$w/sess8.table"; then
	say "the session's rules name 8 ranks: $(grep -c '^allreduce' "$w/sess8.table") rule(s)"
else
	say "FAIL the session's table: not only 8-rank rules: $(cat "$w/sess8.table")"
	bad=1
fi
step "no plugin, a session with rules" 5 "^FAIL: plugin not found" -- \
	--python "$py" --no-start "$w/sess"
# 5. a pth install into a venv made from torch's interpreter, verified through its
#    start-up; the session's rules are for 8 ranks, so at 2 NCCL applies none (exit 5).
#    A venv's --system-site-packages is the BASE interpreter's site, not torch's venv's:
#    a .pth in the new venv adds torch's site-packages (its own .pth files included).
if "$py" -m venv --without-pip --system-site-packages "$w/venv" >>"$log" 2>&1 &&
	vsite=$("$w/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))') &&
	"$py" -c 'import sysconfig; print("import site; site.addsitedir(%r)" % sysconfig.get_path("purelib"))' \
		>"$vsite/00-nccltune-verify-torch.pth" &&
	"$w/venv/bin/python" -c 'import torch' >>"$log" 2>&1; then
	NCCLTUNE_PLUGIN=$plugin "$NT" export --install --python "$w/venv/bin/python" "$w/sess" >>"$log" 2>&1
	step "pth install, torch's NCCL, 1 rank" 0 "the interpreter's start-up" \
		"TUNER/Plugin: Using nccltune" "^matches the session" -- \
		--python "$w/venv/bin/python" "$w/sess"
	NCCL_MULTI_RANK_GPU_ENABLE=1 step "pth install, 8-rank rules at 2 ranks" 5 \
		"no rule applied to this communicator" -- \
		--python "$w/venv/bin/python" --nccl "$lib" --ranks 2 "$w/sess"
else
	say "FAIL pth install: no venv from $py in which torch imports (see above)"
	bad=1
fi
rm -rf "$w"
say "device-verify.sh: $([ $bad = 0 ] && echo "every step passed" || echo "some step FAILED")"
exit $bad
