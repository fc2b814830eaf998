#!/bin/bash
# exploratory device call: teardown behaviour at 2 ranks on one GPU, NCCL 2.30.7
set -u
cd "$(dirname "$0")/../.."
. .carry/rig/nccl-2.30.7/setup.sh
export NCCL_MULTI_RANK_GPU_ENABLE=1 NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O2 -o /tmp/tdp .carry/rig/teardown_probe.c -I/usr/local/cuda/include -L$NCCL230 -lnccl -Xlinker -rpath=$NCCL230 2>&1 | tail -3
for m in ungrouped grouped abort; do echo "== $m"; timeout 90 /tmp/tdp $m 2>&1 | tail -8; echo "rc=$?"; done
export LD_LIBRARY_PATH=$NCCL230:$PWD/.carry/probe/lib
P=.carry/probe/bin/nccltune-probe
echo "== probe version"; $P --version
echo "== probe --launch all (current main), 2.30.7"; timeout 90 $P --launch all --bytes 43008 --ops 122 --iters 50 2>$OUT/all.err | head -c 1500; echo; tail -5 $OUT/all.err
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "mps started"
echo "== mpirun -np 2 probe, clean teardown, MPS"
export NCCL_DEBUG=WARN
timeout 120 mpirun --allow-run-as-root -np 2 -x LD_LIBRARY_PATH -x NCCL_MULTI_RANK_GPU_ENABLE -x NCCL_NVLS_ENABLE -x NCCL_DEBUG -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY $P --bytes 43008,117440512 --ops 122 --iters 50 --step-timeout 20 >$OUT/mpi.json 2>$OUT/mpi.err; echo "rc=$?"
head -c 2500 $OUT/mpi.json; echo; tail -15 $OUT/mpi.err
echo quit | nvidia-cuda-mps-control; echo "mps stopped"
