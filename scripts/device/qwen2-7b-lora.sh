#!/bin/bash
# workloads/qwen2-7b-lora-h200.hcl end to end on one H200 (kind
# nvidia-h200), beside the reference exercise's own recipe on the same
# tokens, in one call:
#   1. a Qwen2-7B-shaped folder with random weights, made here with
#      transformers from Qwen2-7B-Instruct's config.json, with Qwen2's
#      tokenizer files (fetched beforehand: scripts/tokenizer/fetch.sh);
#   2. function-calling conversations from scripts/data/glaive_records.py;
#   3. gpuflow plan (saved before anything runs), then the data prep;
#   4. the reference recipe (transformers Trainer + PEFT) on the data
#      prep's shards and loss masks (qwen2_7b_lora.py hf), then the
#      matrix products and attention of one micro-batch timed alone
#      (qwen2_7b_lora.py parts);
#   5. gpuflow apply: LoRA fine-tune and PEFT export;
#   6. the exported adapters loaded with PeftModel.from_pretrained;
#   7. the table: plan, gpuflow, reference.
#
# Here, from the repository root (DIR holds what the machine needs):
#   DIR=.device/qwen7b && mkdir -p $DIR && cp -r plugins/train/trainer scripts/device/qwen2* scripts/device/train_summary.py \
#     scripts/data/glaive_records.py workloads/qwen2-7b-lora-h200.hcl engine/model/hf/testdata/configs/qwen2-7b-instruct/config.json $DIR/ &&
#   scripts/tokenizer/fetch.sh qwen2_5 $DIR/tokenizer &&
#   CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o $DIR/gpuflow ./cmd/gpuflow && gzip -f $DIR/gpuflow
# There, with DIR carried:
#   bash DIR/qwen2-7b-lora.sh DIR
# STEPS (default 20) and HF_STEPS (default 8) set the two runs' lengths.
# Results: $OUT/table.md, $OUT/run.log, $OUT/plan.txt, $OUT/logs.tgz.
set -uo pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(cd "${1:-$HERE}" && pwd)
OUT=${OUT:-/tmp/qwen7b-out}
WORK=$(mktemp -d)
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }
GF=$WORK/gpuflow
gunzip -c "$DIR/gpuflow.gz" > "$GF" && chmod +x "$GF" || { echo "no $DIR/gpuflow.gz"; exit 1; }
MODEL=$WORK/models/Qwen2-7B-Instruct
WL=$WORK/qwen2-7b-lora-h200.hcl
VARS=(-var "base_model=$MODEL" -var "records=$WORK/data/raw/glaive/*.jsonl" -var "steps=${STEPS:-20}")

finished=0
finish() {
	[ $finished -eq 1 ] && return
	finished=1
	say "table"
	python3 "$DIR/qwen2_7b_lora.py" table "$WORK" && cp "$WORK/table.md" "$OUT/"
	tar czf "$OUT/logs.tgz" --exclude='*.safetensors' --exclude='*.bin' --exclude='*.idx' --exclude='*.distcp' \
		--exclude=gpuflow --exclude=models -C "$WORK" . 2>/dev/null
	say "done"
}
trap finish EXIT
trap 'say "stopped by a signal"; exit 1' TERM INT

say "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1); $(python3 -c 'import torch, transformers, peft; print("torch", torch.__version__, "transformers", transformers.__version__, "peft", peft.__version__)')"
cp "$DIR/qwen2-7b-lora-h200.hcl" "$WL"
python3 "$DIR/glaive_records.py" --shape chat "$WORK/data/raw/glaive/records.jsonl"
say "records: $(wc -l < "$WORK/data/raw/glaive/records.jsonl")"

(cd "$WORK" && "$GF" plan -no-color "${VARS[@]}" "$WL" > plan.txt 2>&1; "$GF" plan -json "${VARS[@]}" "$WL" > plan.json 2> plan.err)
cp "$WORK/plan.txt" "$OUT/"
grep -E "layout|auto |memory/GPU|weights|throughput|step " "$WORK/plan.txt"

say "make the model"
python3 "$DIR/qwen2_7b_lora.py" make "$MODEL" "$DIR/config.json" "$DIR/tokenizer" || exit 1

say "data prep"
(cd "$WORK" && "$GF" apply -auto-approve -no-color -target stage.data_prep.glaive "${VARS[@]}" "$WL" > prep.log 2>&1)
say "data prep exit $?: $(grep -o '[0-9]* documents, [0-9]* tokens' "$WORK/prep.log")"

say "reference recipe"
timeout -k 10 ${HF_TIMEOUT:-150} python3 "$DIR/qwen2_7b_lora.py" hf "$MODEL" "$DIR/trainer" "$WORK/data/glaive/train_00000" \
	--steps "${HF_STEPS:-8}" --skip 3 --json "$WORK/hf.json" > "$WORK/hf.log" 2>&1
say "reference exit $?"
grep -v "Warning\|warn" "$WORK/hf.log" | tail -n 4
python3 "$DIR/qwen2_7b_lora.py" parts --json "$WORK/parts.json" > "$WORK/parts.log" 2>&1
say "parts exit $?: $(tail -c 600 "$WORK/parts.log")"

say "gpuflow apply"
(cd "$WORK" && timeout -k 30 ${GF_TIMEOUT:-240} "$GF" apply -auto-approve -no-color "${VARS[@]}" "$WL" > apply.log 2>&1)
say "apply exit $?"
grep -E "model:|base weights|read |tokens_per_s|succeeded|failed|Error" "$WORK/apply.log" | grep -v "train [0-9]*/" | tail -n 12
grep "train [0-9]*/" "$WORK/apply.log" | tail -n 3

say "PEFT load of the export"
python3 - "$MODEL" "$WORK/exports/qwen2-7b-function-calling" <<'EOF' 2>&1 | grep -v "Warning\|warn" | tail -n 3
import sys, torch
from peft import PeftModel
from transformers import AutoModelForCausalLM
base = AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.bfloat16, device_map={"": 0})
m = PeftModel.from_pretrained(base, sys.argv[2])
b = [p for n, p in m.named_parameters() if "lora_B" in n]
print(f"PEFT loaded {len(b)} lora_B matrices from the export; largest |B| {max(x.abs().max().item() for x in b):.3g} (zero before training)")
EOF
