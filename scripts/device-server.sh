#!/bin/bash
# device-server.sh - on the GPU machine (one H200): the device checks of issue 18.
#   1. nccltune-probe --nccl <torch's NCCL> --fingerprint reports 2.28.9 and that path
#      (and the system's 2.28.3 without --nccl); a measured run with --nccl;
#   2. a short session `nccltune run --python PY --like sglang`: every run loads torch's
#      NCCL with NCCL_CUMEM_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=8 (NCCL_DEBUG=INFO ENV
#      lines in the stderr tails), exports carry "set by the server";
#   3. the PyTorch client at world size 1 under torch's NCCL, showing NCCL_DEBUG lines and
#      the step time (compare.py with a --try).
# --compute-us (compute gap) and --window symmetric: scripts/device-compute-window.sh.
# Build first: scripts/device-build.sh (here), then carry .carry/probe:
#   run(command="scripts/device-server.sh", carry=[".carry/probe"], timeout_s=600)
# Writes $OUT/server.txt (everything) and $OUT/*.json. NCCL_NVLS_ENABLE=0 always.
#   usage: scripts/device-server.sh [PYTHON]   (default /opt/torch/.venv/bin/python3)
set -u
# the carried build: root, bin, P (the probe), LD_LIBRARY_PATH, NCCL_NVLS_ENABLE=0
. "$(dirname "$0")/device-lib.sh"
out=${OUT:-$root/.carry/out}
mkdir -p "$out"
log=$out/server.txt
: >"$log"
py=${1:-$TORCH_PY}
NT=$bin/nccltune
say() { echo "$*" | tee -a "$log"; }
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
tlib=$site/nvidia/nccl/lib/libnccl.so.2
say "python: $py; torch's NCCL: $tlib"

# 1. the probe on torch's NCCL
say "== probe --fingerprint (system NCCL), then --nccl torch's"
"$P" --fingerprint >"$out/fp-system.json" 2>>"$log"
say "exit $?: $(grep -oE '"nccl_(version|path)":"[^"]*"' "$out/fp-system.json" | tr '\n' ' ')"
"$P" --nccl "$tlib" --fingerprint >"$out/fp-torch.json" 2>>"$log"
say "exit $?: $(grep -oE '"nccl_(version|path)":"[^"]*"' "$out/fp-torch.json" | tr '\n' ' ')"
grep -q '"nccl_version":"2.28.9"' "$out/fp-torch.json" && say "PASS: --nccl reports 2.28.9" ||
	say "FAIL: --nccl did not report 2.28.9"
NCCL_DEBUG=VERSION timeout 120 "$P" --nccl "$tlib" --bytes 43008 --ops 122 --iters 20 \
	--warmup 5 >"$out/probe-torch.json" 2>"$out/probe-torch.err"
say "run exit $?: $(head -c 300 "$out/probe-torch.json")"
grep -m2 "NCCL version" "$out/probe-torch.err" | tee -a "$log"

# 2. a session on the server's NCCL, like SGLang
say "== nccltune run --python $py --like sglang --budget 8"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV,INIT timeout 500 "$NT" run --python "$py" --like sglang \
	--budget 8 --time-limit 5m --out "$out/session" >>"$log" 2>&1
say "exit $?"
grep -m3 -E "NCCL_CUMEM_ENABLE|CUDA_DEVICE_MAX_CONNECTIONS|NCCL version" \
	"$out/session/journal.jsonl" | cut -c1-300 | tee -a "$log"
grep -m2 "set by the server" "$out/session/exports/env.sh" 2>/dev/null | tee -a "$log"
"$NT" check "$out/session" >>"$log" 2>&1
say "check exit $? (0: unchanged, same NCCL)"

# 3. the client, world size 1, on torch's NCCL, with NCCL's log
say "== client (torchrun, 1 GPU), NCCL_DEBUG=INFO"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV timeout 300 "$py" -m torch.distributed.run \
	--standalone --nproc_per_node 1 examples/client/verify_step.py --replays 10 --rounds 3 \
	>"$out/client.json" 2>"$out/client.err"
say "exit $?: $(head -c 1500 "$out/client.json")"
grep -m6 -E "NCCL version|NCCL_" "$out/client.err" | tee -a "$log"
say "== compare.py --nproc 1 --rounds 2 --session (the session above) --try NCCL_PROTO=LL"
timeout 300 "$py" examples/client/compare.py --python "$py" --nproc 1 --rounds 2 \
	--session "$out/session" --try "NCCL_PROTO=LL" --json "$out/compare.json" \
	-- --replays 10 --rounds 2 >>"$log" 2>&1
say "exit $?"
