#!/bin/bash
# gpuflow's Hugging Face interchange on a GPU machine, in one call:
# random-weight Llama 3.1, Llama 3.2 (tied), Qwen2 (tied and not),
# Mistral and GPT-2 (tied and not) folders made with transformers; gpuflow's logits against
# transformers' (fp32 CPU, fp32 and bf16 GPU); what each rank reads when
# loading (gpuflow's loader and DCP's HuggingFaceStorageReader); load and
# export under CPU-rank layouts 1, dp2 (FSDP), tp2, pp2 and tp2 x pp2
# (and on one GPU) through gpuflow apply; LoRA exported as PEFT and merged; and a pretrain
# -> export -> finetune -> export chain.
#
# Here, from the repository root (DIR holds what the machine needs):
#   DIR=.device/hf && mkdir -p $DIR && cp -r plugins/train/trainer scripts/device/hf* $DIR/ &&
#   CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o $DIR/gpuflow ./cmd/gpuflow && gzip -f $DIR/gpuflow
# There, with DIR carried:
#   bash DIR/hf-check.sh DIR
# Results: $OUT/table.md (one line per check), $OUT/run.log, $OUT/logs.tgz.
set -uo pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(cd "${1:-$HERE}" && pwd)
TRAINER=${TRAINER:-$DIR/trainer}
OUT=${OUT:-/tmp/hf-check-out}
WORK=$(mktemp -d)
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }
GF=$WORK/gpuflow
gunzip -c "$DIR/gpuflow.gz" > "$GF" && chmod +x "$GF" || { echo "no $DIR/gpuflow.gz"; exit 1; }

finished=0
finish() {
	[ $finished -eq 1 ] && return
	finished=1
	say "compare"
	python3 "$HERE/hf_check.py" compare "$WORK"
	python3 "$HERE/hf_check.py" table "$WORK" > "$OUT/table.md"
	cat "$OUT/table.md"
	tar czf "$OUT/logs.tgz" --exclude='*.safetensors' --exclude=gpuflow --exclude='*.bin' -C "$WORK" . 2>/dev/null
}

trap 'finish; exit 1' TERM

say "make models"
python3 "$HERE/hf_check.py" make "$WORK" > "$OUT/make.log" 2>&1 || { tail -30 "$OUT/make.log"; exit 1; }

say "logits and load probe"
python3 "$HERE/hf_check.py" logits "$WORK" "$TRAINER" > "$OUT/logits.log" 2>&1 &
torchrun --standalone --nproc-per-node 2 "$HERE/hf_check.py" probe "$WORK" "$TRAINER" > "$OUT/probe.log" 2>&1 &

# run ARCH KIND LAYOUT VARS...: gpuflow apply of hf-check-KIND.hcl on ARCH.
run() {
	local arch=$1 kind=$2 layout=$3
	shift 3
	local dir=$WORK/runs/$arch/$kind-$layout
	mkdir -p "$dir"
	(cd "$dir" && timeout -k 10 300 "$GF" apply -auto-approve -no-color -var "folder=$WORK/models/$arch" -var "data=$WORK/data/train" \
		-var "out=$dir/out" "$@" "$HERE/hf-check-$kind.hcl" > apply.log 2>&1)
	say "$arch $kind $layout exit $?"
}
throttle() { while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-10}" ]; do sleep 1; done; }

for arch in qwen2 llama3.1 gpt2; do
	for l in "1" "dp2 -var dp=2" "tp2 -var tp=2" "pp2 -var pp=2" "tp2pp2 -var tp=2 -var pp=2"; do
		throttle; run $arch load $l &
	done
	for l in "1" "dp2 -var dp=2" "pp2 -var pp=2"; do
		throttle; run $arch lora $l &
	done
done
for arch in qwen2-tied llama3.2-tied; do
	for l in "1" "dp2 -var dp=2"; do
		throttle; run $arch load $l &
		throttle; run $arch lora $l &
	done
done
# The same on the GPU (eager: compiling a toy model would take longer than training it).
(export GPUFLOW_TRAIN_COMPILE=0; run qwen2 load gpu -var device=cuda; run qwen2 lora gpu -var device=cuda) &
throttle; run mistral load 1 &
throttle; run mistral lora 1 &
mkdir -p "$WORK/runs/chain"
(cd "$WORK/runs/chain" && timeout -k 10 300 "$GF" apply -auto-approve -no-color -var "data=$WORK/data/train" "$HERE/hf-chain.hcl" > apply.log 2>&1; say "chain exit $?") &
wait $(jobs -p) # not a bare wait: that would also wait for the tee above
cat "$OUT/logits.log" "$OUT/probe.log" | grep -v "^W\|Warning" | tail -40
finish
