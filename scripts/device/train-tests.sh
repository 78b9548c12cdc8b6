#!/bin/bash
# The trainer's own tests (plugins/train/trainer/tests) on a GPU machine:
# data, schedule, model, recomputation, LoRA and merge, fp8 products,
# pre-flight, and one-GPU runs through torchrun (checkpoint, resume,
# LoRA on the checkpoint).
#
#   bash scripts/device/train-tests.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
cd "$(dirname "$0")/../.."
python3 -m unittest discover -s plugins/train/trainer/tests -v
