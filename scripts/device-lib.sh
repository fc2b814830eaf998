# device-lib.sh - sourced by scripts/device-multi-gpu-*.sh (issue 19): the carried build,
# the GPU count, a result folder, and option checks against --help so a step needing an
# option another branch adds says "not available in this build" instead of failing.
# Sets: root, bin, P (probe), PLUGIN, ngpu, kind, res (the step's result folder).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
bin=$root/.carry/probe/bin
[ -x "$bin/nccltune-probe" ] || { echo "$0: no $bin/nccltune-probe (run scripts/device-build.sh here first)" >&2; exit 1; }
export LD_LIBRARY_PATH="$root/.carry/probe/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
P=$bin/nccltune-probe
HAVE_MPI=1
if ldd "$P" | grep -q "not found"; then P=$bin/nccltune-probe-nompi; HAVE_MPI=0; fi
command -v mpirun >/dev/null 2>&1 || HAVE_MPI=0
PLUGIN=$root/.carry/probe/lib/libnccl-tuner-nccltune.so
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python3}
# the seed report's hand configuration (the "safer" one tried blind on the PCIe box)
HAND="NCCL_PROTO=LL NCCL_ALGO=Ring NCCL_P2P_LEVEL=SYS NCCL_MAX_NCHANNELS=2 NCCL_BUFFSIZE=131072 NCCL_NTHREADS=64"
TORCH_NCCL=$("$TORCH_PY" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
kind=h200-${ngpu}gpu
# result_dir STEP: $OUT/results/<kind>-<date>/STEP (results/-like layout), with run.log.
result_dir() {
	res=${OUT:-$root/.carry/out}/results/$kind-$(date -u +%Y-%m-%d)/$1
	mkdir -p "$res"
	{
		echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ) command: $0 $*"
		nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
		"$P" --version 2>&1
		echo "GPUs: $ngpu; MPI launch: $([ $HAVE_MPI = 1 ] && echo yes || echo no); torch NCCL: ${TORCH_NCCL:-not found}"
	} >>"$res/run.log"
	[ "$ngpu" -ge 2 ] || note "DEGRADED: $ngpu GPU: nranks 1, NCCL consults no tuner (no getCollInfo, no TUNING line) and in-place graphs are empty; mechanics only"
}
note() { echo "$*" | tee -a "$res/run.log"; }
# has_option HELP_CMD... -- OPTION: 0 when the command's --help lists OPTION.
has_option() {
	local opt=${*: -1}
	"${@:1:$#-1}" --help 2>&1 | grep -q -- "$opt\b"
}
# need_option WHAT HELP_CMD... OPTION: has_option, else note "not available in this build".
need_option() {
	local what=$1; shift
	has_option "$@" && return 0
	note "$what: ${*: -1} not available in this build (skipped)"
	return 1
}
