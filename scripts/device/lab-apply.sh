#!/bin/bash
# The lab workload applied as the README shows it, typed from the
# repository root with a relative path, on one H200 (the workload's
# default profile, h200-x1): acceptance, both data preps, pre-train and
# LoRA fine-tune; then applied again, when every stage should be skipped.
#
# Here, from the repository root:
#   CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o bin/gpuflow ./cmd/gpuflow
# There, with bin carried:
#   bash scripts/device/lab-apply.sh
# Results: $OUT/plan.txt, $OUT/apply.log, $OUT/again.log and
# $OUT/lab-runs.tgz (the run folders and state, without checkpoints and
# shards).
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-out}
mkdir -p "$OUT"
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }

say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(python3 -c 'import torch; print("torch", torch.__version__)')"
bin/gpuflow plan -no-color workloads/h200-lab.hcl > "$OUT/plan.txt" 2>&1
say "plan exit $?"
bin/gpuflow apply -auto-approve -no-color workloads/h200-lab.hcl > "$OUT/apply.log" 2>&1
say "apply exit $?"
bin/gpuflow apply -auto-approve -no-color workloads/h200-lab.hcl > "$OUT/again.log" 2>&1
say "second apply exit $?"
tar czf "$OUT/lab-runs.tgz" --exclude=checkpoints --exclude='*.bin' --exclude='*.idx' \
	--exclude='*.safetensors' --exclude='*.distcp' .gpuflow workloads/data/lab/*.json 2>/dev/null
grep -E "^(Plan|Apply|  [a-z_]+\.[a-z_]+)" "$OUT/plan.txt" | head -20
tail -n 30 "$OUT/apply.log"
tail -n 8 "$OUT/again.log"
