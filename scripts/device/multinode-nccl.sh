#!/bin/bash
# Multi-node NCCL on one host: two simulated nodes of 2 GPUs each (two
# gpubench processes joined through GPUFLOW_NCCL_ID_FILE, as the Slurm node
# host sets them up) against one process driving all 4 GPUs, same sweep,
# then each node's straggler verdict.
#
# Here:  CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o .device/gpubench-mn ./plugins/gpubench/cmd/gpubench
#        gzip -kf .device/gpubench-mn
# There (nvidia-h200-x4, carrying .device/gpubench-mn.gz), from the repository root:
#        bash scripts/device/multinode-nccl.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 NCCL_DEBUG=WARN
OUT=${OUT:-/tmp/multinode-nccl}
mkdir -p "$OUT"
cfg=$(cd "$(dirname "$0")" && pwd)/multinode-nccl.hcl
bin=$(mktemp -d)/gpubench
gunzip -c .device/gpubench-mn.gz > "$bin" && chmod +x "$bin" || exit 1
nvidia-smi -L
J=$(mktemp -d)
echo "== single process, 4 GPUs"
CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 60 "$bin" -q -json "$OUT/single.json" "$cfg" > "$OUT/single.txt" 2>&1; echo "single rc=$?"
echo "== two nodes of 2 GPUs (node 1 started first)"
(GPUFLOW_NODES=2 GPUFLOW_NODE_RANK=1 GPUFLOW_JOB_DIR=$J GPUFLOW_NCCL_ID_FILE=$J/nccl-id CUDA_VISIBLE_DEVICES=2,3 \
  timeout 75 "$bin" -q -json "$OUT/node1.json" "$cfg" > "$OUT/node1.txt" 2>&1; echo "node1 rc=$?") &
sleep 1
GPUFLOW_NODES=2 GPUFLOW_NODE_RANK=0 GPUFLOW_JOB_DIR=$J GPUFLOW_NCCL_ID_FILE=$J/nccl-id CUDA_VISIBLE_DEVICES=0,1 \
  timeout 75 "$bin" -q -json "$OUT/node0.json" "$cfg" > "$OUT/node0.txt" 2>&1; echo "node0 rc=$?"
wait
ls -la "$J"; cp "$J"/*.json "$OUT"/ 2>/dev/null
for f in single node0 node1; do echo "---- $f"; cat "$OUT/$f.txt"; done
