#!/bin/bash
# The plan against runs it was not fitted to, and the trainer's own tests,
# on a lent 4x H200 machine (kind nvidia-h200-x4) in one call. Every
# configuration is planned (plan.json) before any of them runs; then:
#   GPU 1:    the trainer's tests
#   GPU 0:    oos1, the Llama-3.2-1B shape, micro-batch 8, full recompute
#   GPUs 2,3: oos2, the same on two GPUs, micro-batch 2, two per step,
#             FSDP; then oos4, replicated (ZeRO 0), eager
#   GPU 0:    oos3 alone, the h200-lab model on one GPU, micro-batch 8,
#             four per step (bound by the host)
#
# Here, from the repository root:
#   mkdir -p .device/train && CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o .device/train/gpuflow ./cmd/gpuflow && gzip -f .device/train/gpuflow
# There, with .device/train carried:
#   timeout -k 15 380 bash scripts/device/train-oos.sh
# Results: $OUT/oos.md, $OUT/unittest.log, $OUT/run.log, $OUT/oos-logs.tgz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 GPUFLOW_TRAIN_CHECKPOINT=0
cd "$(dirname "$0")/../.."
HERE=$(pwd)/scripts/device
OUT=${OUT:-/tmp/train-oos}
WORK=$(mktemp -d)
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }

finished=0
finish() {
	[ $finished -eq 1 ] && return
	finished=1
	say "summary"
	python3 "$HERE/train_oos_summary.py" "$WORK" --md "$OUT/oos.md"
	cp "$WORK/unittest.log" "$OUT/" 2>/dev/null
	tail -n 30 "$WORK/unittest.log" 2>/dev/null
	for d in oos1 oos2 oos3 oos4; do echo "-- $d"; tail -n 8 "$WORK/$d/apply.log" 2>/dev/null; done
	tar czf "$OUT/oos-logs.tgz" --exclude='*.bin' --exclude='*.idx' --exclude=checkpoints --exclude=gpuflow -C "$WORK" . 2>/dev/null
	say "done"
}
trap finish EXIT
trap 'say "stopped by a signal"; exit 1' TERM INT

GF=$WORK/gpuflow
gunzip -c .device/train/gpuflow.gz > "$GF" && chmod +x "$GF" || { echo "no .device/train/gpuflow.gz"; exit 1; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x $(nvidia-smi -L | wc -l); $(python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())')"

python3 "$HERE/train_correctness.py" shard "$WORK/random" --vocab 128256 --tokens 2000000 --random
python3 "$HERE/train_correctness.py" shard "$WORK/small" --vocab 50304 --tokens 3000000 --random

# Each run's workload and variables; planned now, applied later.
declare -A WL VARS
WL[oos1]=$HERE/train-bench.hcl VARS[oos1]="-var profile=h200-x1 -var gpus=1 -var micro_batch=8 -var recompute=full -var data=$WORK/random"
WL[oos2]=$HERE/train-bench.hcl VARS[oos2]="-var profile=h200-x2 -var gpus=2 -var micro_batch=2 -var accumulation=2 -var data=$WORK/random"
WL[oos3]=$HERE/train-small.hcl VARS[oos3]="-var profile=h200-x1 -var gpus=1 -var micro_batch=8 -var accumulation=4 -var data=$WORK/small"
WL[oos4]=$HERE/train-bench.hcl VARS[oos4]="-var profile=h200-x2 -var gpus=2 -var fsdp=false -var framework=gpuflow-eager -var data=$WORK/random"

for name in oos1 oos2 oos3 oos4; do
	mkdir -p "$WORK/$name"
	# shellcheck disable=SC2086 # VARS holds several words
	(cd "$WORK/$name" && "$GF" plan -json -no-color ${VARS[$name]} "${WL[$name]}" > plan.json 2> plan.err)
	say "$name planned: exit $?"
done

# apply_run NAME DEVICES LIMIT
apply_run() {
	local name=$1 devices=$2 limit=$3
	# shellcheck disable=SC2086
	(cd "$WORK/$name" && CUDA_VISIBLE_DEVICES=$devices timeout -k 15 "$limit" "$GF" apply -auto-approve -no-color ${VARS[$name]} "${WL[$name]}" > apply.log 2>&1)
	say "$name apply exit $?"
}

say "phase 1: tests on GPU 1, oos1 on GPU 0, oos2 then oos4 on GPUs 2,3"
(CUDA_VISIBLE_DEVICES=1 timeout -k 10 200 bash "$HERE/train-tests.sh" > "$WORK/unittest.log" 2>&1; say "trainer tests exit $?") &
TESTS=$!
apply_run oos1 0 150 &
ONE=$!
(apply_run oos2 2,3 120; apply_run oos4 2,3 120) &
TWO=$!
wait $ONE $TWO $TESTS

say "phase 2: oos3 alone on GPU 0"
apply_run oos3 0 120
