#!/bin/bash
# device-sweep-equivalence.sh - issue 19 step 2, one command on the GPU machine: the same
# >= 20 choices (default: Ring/Tree x LL/LL128/Simple x 1/2/4/8 CTAs at 43,008 B, 122 ops)
# measured in one sweeping probe process (--sweep) and each in a fresh probe process deployed
# through nccltune's plugin (a one-rule table), interleaved over R repeats; per choice the
# ratio sweep/fresh with its 95% interval, and whether the rankings agree within noise
# (bench/sweep_equivalence.py). Writes $OUT/sweep-equivalence/{equivalence.json,table.txt,
# run.log,work/}.
#
# Build first, here: scripts/device-build.sh; then call the device tool with
#   command: scripts/device-sweep-equivalence.sh [REPEATS] [LAUNCH] [extra sweep_equivalence args]
#   carry: [".carry/probe"]
# LAUNCH: process (default), all or mpi (mpirun -np <GPUs> around every probe run).
# With one GPU it still runs (nranks 1: NCCL asks no tuner and the in-place graph is empty,
# so the ratios only show mechanics) and says so. NCCL_NVLS_ENABLE=0; no GPU setting changes.
set -u
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
# the carried build: root, P (the probe, without MPI where libmpi is missing), PLUGIN, ngpu
. "$(dirname "$0")/device-lib.sh"
repeats=${1:-5}
launch=${2:-process}
shift $(($# < 2 ? $# : 2))
out=${OUT:-$root/.carry/out}/sweep-equivalence
mkdir -p "$out/work"
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	"$P" --version
	echo "GPUs: $ngpu, launch: $launch, repeats: $repeats"
} | tee "$out/run.log"
if [ "$ngpu" -lt 2 ]; then
	echo "DEGRADED: $ngpu GPU(s): nranks 1, NCCL consults no tuner and the in-place all-reduce" \
		"graph is empty; the ratios below show the sweep's mechanics, not a latency landscape" |
		tee -a "$out/run.log"
fi
probe=("$P")
pargs=(--probe-arg=--gpus "--probe-arg=$ngpu")
case "$launch" in
process|all) pargs+=(--probe-arg=--launch "--probe-arg=$launch") ;;
mpi)
	# One rank per GPU under mpirun; the wrapper keeps the tool's one-probe-command view.
	wrap=$out/work/mpi-probe.sh
	printf '#!/bin/sh\nexec mpirun --allow-run-as-root -np %s -x LD_LIBRARY_PATH -x NCCL_TUNER_PLUGIN -x NCCLTUNE_TUNER_TABLE -x NCCL_NVLS_ENABLE -x NCCLTUNE_RUN %s --launch mpi "$@"\n' \
		"$ngpu" "$P" >"$wrap"
	chmod +x "$wrap"
	probe=("$wrap"); pargs=() ;;
*) echo "device-sweep-equivalence.sh: LAUNCH is process, all or mpi, not '$launch'" >&2; exit 2 ;;
esac
python3 bench/sweep_equivalence.py --probe "${probe[0]}" --plugin "$PLUGIN" \
	--bytes 43008 --ops 122 --repeats "$repeats" --iters 200 --rounds 5 "${pargs[@]}" \
	--work "$out/work" --json "$out/equivalence.json" "$@" >"$out/table.txt" 2>>"$out/run.log"
rc=$?
cat "$out/table.txt"
echo "sweep_equivalence.py: exit $rc (0 every run worked, 1 a probe run failed; see run.log)"
tail -5 "$out/run.log"
exit $rc
