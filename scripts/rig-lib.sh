# rig-lib.sh - sourced by scripts/rig-*.sh (issue 26): two ranks of one communicator on
# the one GPU with NCCL 2.30.7 (NCCL_MULTI_RANK_GPU_ENABLE). On top of device-lib.sh (the
# carried build: root, bin, P, PLUGIN, TORCH_PY, HAND, ngpu) it unpacks the NCCL 2.30.7
# folder the lead copied into the checkout (git-ignored rig/nccl-2.30.7/ or
# .carry/rig/nccl-2.30.7/, or RIG_NCCL_DIR)
# and sets:
#   LIB230    .../libnccl.so.2 of NCCL 2.30.7
#   RIG       the probe's rig options: --nccl $LIB230 --ranks-per-gpu 2
#   gpukind   h100 / h200 (from nvidia-smi), res: the step's result folder
#             $OUT/results/<gpukind>-2ranks-<date>/STEP, with run.log
# and mps_start / mps_stop (a private pipe folder; stopped on exit). Every figure of the
# rig is of two ranks sharing one GPU's SMs and memory: real NCCL mechanics, not a
# multi-GPU machine's landscape; each result folder says so in run.log.
. "$(dirname "${BASH_SOURCE[0]}")/device-lib.sh"
if [ -z "${RIG_NCCL_DIR:-}" ]; then   # rig/ (git-ignored) or .carry/rig/, as carried
	RIG_NCCL_DIR=$root/rig/nccl-2.30.7
	[ -f "$RIG_NCCL_DIR/setup.sh" ] || RIG_NCCL_DIR=$root/.carry/rig/nccl-2.30.7
fi
[ -f "$RIG_NCCL_DIR/setup.sh" ] || { echo "$0: no $RIG_NCCL_DIR/setup.sh (copy ../shared/tools/nccl-2.30.7 to rig/nccl-2.30.7 and carry rig)" >&2; exit 1; }
. "$RIG_NCCL_DIR/setup.sh"
LIB230=$NCCL230/libnccl.so.2
[ -f "$LIB230" ] || { echo "$0: NCCL 2.30.7 did not unpack into $NCCL230" >&2; exit 1; }
RIG=(--nccl "$LIB230" --ranks-per-gpu 2)
export NCCLTUNE_PLUGIN=${NCCLTUNE_PLUGIN:-$PLUGIN}   # the tuner finds the carried plugin
case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
*H200*) gpukind=h200 ;; *H100*) gpukind=h100 ;; *) gpukind=gpu ;;
esac
# rig_result_dir STEP: the step's folder and its run.log header.
rig_result_dir() {
	res=${OUT:-$root/.carry/out}/results/$gpukind-2ranks-$(date -u +%Y-%m-%d)/$1
	mkdir -p "$res"
	{
		echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ) command: $0 $*"
		nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
		"$P" --version 2>&1
		echo "NCCL: $LIB230 (2.30.7, sm_90); probe rig options: ${RIG[*]}; MPI launch: $([ "$HAVE_MPI" = 1 ] && echo yes || echo no)"
		echo "THE RIG: two ranks of one communicator share one GPU's SMs and memory; real NCCL"
		echo "mechanics and a real (odd) landscape, not a multi-GPU machine's figures."
	} >>"$res/run.log"
}
MPS_DIR=/tmp/nccltune-rig-mps
# mps_start: the MPS control daemon for processes sharing the GPU (two processes without
# it time-slice: ~4.5 ms per all-reduce). Stopped by mps_stop and on exit.
mps_start() {
	command -v nvidia-cuda-mps-control >/dev/null 2>&1 || { note "MPS: nvidia-cuda-mps-control not found"; return 1; }
	mkdir -p "$MPS_DIR/pipe" "$MPS_DIR/log"
	export CUDA_MPS_PIPE_DIRECTORY=$MPS_DIR/pipe CUDA_MPS_LOG_DIRECTORY=$MPS_DIR/log
	nvidia-cuda-mps-control -d && sleep 1 && trap mps_stop EXIT && note "MPS: daemon started ($MPS_DIR)"
}
mps_stop() {
	[ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] || return 0
	echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
	sleep 1
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
