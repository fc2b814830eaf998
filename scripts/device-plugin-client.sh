#!/bin/bash
# device-plugin-client.sh - on the GPU machine: does NCCL load nccltune's tuner plugin
# (the system's NCCL and the torch wheel's), and does the PyTorch client run there.
# Run from the repository root with .carry/probe carried (scripts/device-build.sh).
# Writes $OUT/plugin-client.txt (everything) and $OUT/*.json. NCCL_NVLS_ENABLE=0 always.
#   usage: scripts/device-plugin-client.sh [PYTHON]   (default /opt/torch/.venv/bin/python3)
set -u
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-$root/.carry/out}
mkdir -p "$out"
log=$out/plugin-client.txt
: >"$log"
py=${1:-/opt/torch/.venv/bin/python3}
lib=$root/.carry/probe/lib
P=$root/.carry/probe/bin/nccltune-probe-nompi
plugin=$lib/libnccl-tuner-nccltune.so
table=$(mktemp /tmp/nccltune-table.XXXXXX)
printf 'nccltune-tuner/1\nallreduce * * 43008 43008 ring ll 2 0\n' >"$table"
say() { echo "$*" | tee -a "$log"; }
torch_nccl=$("$py" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
say "python: $py; torch's NCCL folder: ${torch_nccl:-not found}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$log" 2>&1

# 1. the probe with the plugin, under each NCCL
for which in system torch; do
	ldp=$lib
	[ "$which" = torch ] && ldp=$torch_nccl:$lib
	say "== probe, $which NCCL, plugin + table (rule for 43008 B)"
	env LD_LIBRARY_PATH="$ldp" NCCL_TUNER_PLUGIN="$plugin" NCCLTUNE_TUNER_TABLE="$table" \
		NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV \
		timeout 120 "$P" --bytes 43008,117440512 --ops 122 --iters 20 --warmup 5 \
		>"$out/probe-$which.json" 2>"$out/probe-$which.err"
	say "exit $?: $(head -c 400 "$out/probe-$which.json")"
	grep -iE "nccltune|tuner|NCCL version|Bytes -> " "$out/probe-$which.err" | head -12 | tee -a "$log"
done

# 2. the PyTorch client, world size 1: defaults, then with the plugin and NCCL's log
say "== client (torchrun, 1 GPU), defaults"
timeout 300 "$py" -m torch.distributed.run --standalone --nproc_per_node 1 \
	examples/client/verify_step.py --replays 10 --rounds 3 >"$out/client-default.json" 2>"$out/client-default.err"
say "exit $?: $(head -c 1500 "$out/client-default.json")"
tail -5 "$out/client-default.err" >>"$log"
say "== client, plugin + table, NCCL_DEBUG=INFO"
NCCL_TUNER_PLUGIN="$plugin" NCCLTUNE_TUNER_TABLE="$table" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV \
	timeout 300 "$py" -m torch.distributed.run --standalone --nproc_per_node 1 \
	examples/client/verify_step.py --replays 10 --rounds 2 >"$out/client-plugin.json" 2>"$out/client-plugin.err"
say "exit $?: $(head -c 600 "$out/client-plugin.json")"
grep -iE "nccltune|tuner|NCCL version" "$out/client-plugin.err" | head -12 | tee -a "$log"
# 3. compare.py end to end (no session: defaults / installed (nothing) / a --try)
say "== compare.py --nproc 1 --rounds 2 --try NCCL_PROTO=LL"
timeout 300 "$py" examples/client/compare.py --python "$py" --nproc 1 --rounds 2 \
	--try "NCCL_PROTO=LL" --json "$out/compare.json" -- --replays 10 --rounds 2 >>"$log" 2>&1
say "exit $?"
rm -f "$table"
