#!/bin/bash
# gpuflow's trainer on a 4x H200 machine (kind nvidia-h200-x4) in one
# call, the GPUs kept busy in parallel:
#   GPUs 2,3: gpuflow apply workloads/h200-lab.hcl (profile h200-x2):
#             acceptance, data prep, pre-train, LoRA fine-tune
#   GPU 0:    1-GPU speed run of the Llama-3.2-1B shape (train-bench.hcl)
#   GPU 1:    Hugging Face eager baseline, the trainer's tests, the
#             correctness reference
#   GPUs 0,1: correctness under TP2, DP2, PP2, PP2 interleaved
#   GPUs 0-3: 4-GPU FSDP speed run
# Each gpuflow run is planned (plan.json) before it is applied, so the
# summary sets the plan's prediction beside the measurement.
#
# Here, from the repository root:
#   mkdir -p .device/train && CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o .device/train/gpuflow ./cmd/gpuflow && gzip -f .device/train/gpuflow
# There, with .device/train carried:
#   timeout -k 20 430 bash scripts/device/train-all.sh
# PARTS picks what runs (default all): lab, speed, hf, tests, correctness.
# Results: $OUT/summary.md, $OUT/correctness.md, $OUT/run.log, $OUT/train-logs.tgz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
cd "$(dirname "$0")/../.."
REPO=$(pwd)
HERE=$REPO/scripts/device
OUT=${OUT:-/tmp/train-out}
WORK=$(mktemp -d)
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }
PARTS=${PARTS:-lab,speed,hf,tests,correctness}
part() { [[ ",$PARTS," == *",$1,"* ]]; }

finished=0
finish() {
	[ $finished -eq 1 ] && return
	finished=1
	say "summary"
	if part correctness; then
		python3 "$HERE/train_correctness.py" compare "$WORK" --md "$OUT/correctness.md"
		echo "correctness exit $?"
	fi
	python3 "$HERE/train_summary.py" "$WORK" --md "$OUT/summary.md"
	tail -n 25 "$WORK/unittest.log" 2>/dev/null
	cat "$WORK/hf.json" "$WORK/hf.err" 2>/dev/null | tail -n 5
	for d in speed1 eager1 speed4 lab; do echo "-- $d"; tail -n 12 "$WORK/$d/apply.log" 2>/dev/null; done
	cp "$WORK"/*/.gpuflow/calibration.json "$OUT/" 2>/dev/null
	tar czf "$OUT/train-logs.tgz" --exclude='*.bin' --exclude='*.idx' --exclude='*.distcp' --exclude=checkpoints \
		--exclude=gpuflow --exclude='*.safetensors' -C "$WORK" . 2>/dev/null
	say "done"
}
trap finish EXIT
trap 'say "stopped by a signal"; exit 1' TERM INT

GF=$WORK/gpuflow
gunzip -c .device/train/gpuflow.gz > "$GF" && chmod +x "$GF" || { echo "no .device/train/gpuflow.gz"; exit 1; }
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x $(nvidia-smi -L | wc -l); $(python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())')"

python3 "$HERE/train_correctness.py" shard "$WORK/markov" --vocab 2048 --tokens 300000
python3 "$HERE/train_correctness.py" shard "$WORK/random" --vocab 128256 --tokens 2000000 --random

# plan_apply DIR DEVICES LIMIT WORKLOAD VARS...: plan to DIR/plan.json, then apply.
plan_apply() {
	local dir=$1 devices=$2 limit=$3 workload=$4
	shift 4
	mkdir -p "$dir" && cd "$dir" || return
	CUDA_VISIBLE_DEVICES=$devices "$GF" plan -json -no-color "$@" "$workload" > plan.json 2> plan.err
	CUDA_VISIBLE_DEVICES=$devices timeout -k 15 "$limit" "$GF" apply -auto-approve -no-color "$@" "$workload" > apply.log 2>&1
	say "$(basename "$dir") apply exit $?"
}

# The lab pre-trains on the image's copyright files (lab_corpus.py).
python3 "$HERE/lab_corpus.py" "$WORK/corpus"

say "phase 1: lab on GPUs 2,3; speed on GPU 0; baseline, tests, reference, eager speed on GPU 1"
LAB=""
if part lab; then
	(plan_apply "$WORK/lab" 2,3 330 "$REPO/workloads/h200-lab.hcl" -var profile=h200-x2 -var "corpus=$WORK/corpus/*") &
	LAB=$!
fi
SPEED1=""
if part speed; then
	(export GPUFLOW_TRAIN_CHECKPOINT=0; plan_apply "$WORK/speed1" 0 200 "$HERE/train-bench.hcl" -var profile=h200-x1 -var gpus=1 -var "data=$WORK/random") &
	SPEED1=$!
fi
(
	export CUDA_VISIBLE_DEVICES=1
	if part hf; then
		timeout -k 10 100 python3 "$HERE/train_hf_baseline.py" > "$WORK/hf.json" 2> "$WORK/hf.err"
		say "hf baseline exit $?"
	fi
	if part tests; then
		timeout -k 10 150 bash "$HERE/train-tests.sh" > "$WORK/unittest.log" 2>&1
		say "trainer tests exit $?"
	fi
	if part correctness; then
		python3 "$HERE/train_correctness.py" run ref "$WORK" --timeout 100
	fi
	if part speed; then
		(export GPUFLOW_TRAIN_CHECKPOINT=0; plan_apply "$WORK/eager1" 1 150 "$HERE/train-bench.hcl" -var profile=h200-x1 -var gpus=1 -var framework=gpuflow-eager -var "data=$WORK/random")
	fi
) &
GPU1=$!
wait $SPEED1 $GPU1

if part correctness; then
	say "phase 2: correctness on GPUs 0,1"
	for name in tp2 dp2 pp2 pp2vp2; do
		CUDA_VISIBLE_DEVICES=0,1 python3 "$HERE/train_correctness.py" run $name "$WORK" --timeout 90
	done
fi
[ -n "$LAB" ] && wait $LAB

if part speed; then
	say "phase 3: 4-GPU FSDP speed"
	(export GPUFLOW_TRAIN_CHECKPOINT=0; plan_apply "$WORK/speed4" 0,1,2,3 200 "$HERE/train-bench.hcl" -var profile=h200-x4 -var gpus=4 -var "data=$WORK/random")
fi
