#!/bin/bash
# The lab workload on one H200 (profile h200-x1) with validation every 25
# steps and TensorBoard event files, then the trainer's tests: the ones on
# CPU ranks (validation under four layouts) beside the apply, the GPU ones
# after it.
#
# Here, from the repository root (gzip keeps the binary small to copy):
#   CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o bin/gpuflow ./cmd/gpuflow && gzip -9 bin/gpuflow
# There, with bin carried:
#   bash scripts/device/lab-valid.sh
# Results: $OUT/plan.txt, $OUT/apply.log, $OUT/lab-runs.tgz (run folders
# with their TensorBoard files, and state, without checkpoints and
# shards), $OUT/pytest-cpu.log and $OUT/pytest.log.
set -uo pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lab-out}
mkdir -p "$OUT"
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }
if [ -f bin/gpuflow.gz ]; then gunzip -f bin/gpuflow.gz && chmod +x bin/gpuflow; fi
say "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(python3 -c 'import torch, tensorboard; print("torch", torch.__version__, "tensorboard", tensorboard.__version__)' 2>&1 | tail -1); root $(pwd)"
# tests LIMIT_S PYTEST_SELECTION UNITTEST_PATTERN...: the trainer's tests,
# through unittest where pytest is missing.
tests() {
	local limit=$1 sel=$2
	shift 2
	if python3 -c 'import pytest' 2>/dev/null; then
		timeout -k 5 "$limit" python3 -m pytest -q -p no:cacheprovider tests -k "$sel"
	else
		timeout -k 5 "$limit" python3 -m unittest discover -s tests -v "$@"
	fi
}
# The CPU-rank tests beside the lab (they use no GPU); the GPU ones after it.
(cd plugins/train/trainer && CUDA_VISIBLE_DEVICES= tests 240 "ValidationLayouts or DataTest" -k ValidationLayouts -k DataTest \
	> "$OUT/pytest-cpu.log" 2>&1; echo "== cpu tests exit $?" >> "$OUT/pytest-cpu.log") &
CPU_TESTS=$!
bin/gpuflow plan -no-color workloads/h200-lab.hcl > "$OUT/plan.txt" 2>&1
say "plan exit $?"
timeout -k 5 200 bin/gpuflow apply -auto-approve -no-color workloads/h200-lab.hcl > "$OUT/apply.log" 2>&1
say "apply exit $?"
tar czf "$OUT/lab-runs.tgz" --exclude=checkpoints --exclude='*.bin' --exclude='*.idx' --exclude='*.safetensors' \
	--exclude='*.distcp' --exclude=trainer .gpuflow workloads/data/*/manifest.json 2>/dev/null
say "tar exit $?"
left=$((280 - ($(date +%s) - T0)))
cd plugins/train/trainer
tests $left "not ValidationLayouts and not DataTest" -k ModelTest -k LoRATest -k FP8Test -k PreflightTest -k ReportTest \
	-k ScheduleTest -k EndToEndTest -k KeyMapTest -k RopeSettingsTest > "$OUT/pytest.log" 2>&1
say "gpu tests exit $? (limit ${left}s)"
cd - >/dev/null
wait $CPU_TESTS
grep -E "validation at|succeeded after|failed|Error" "$OUT/apply.log" | head -30
sed -n '/^Apply finished/,$p' "$OUT/apply.log" | head -30
tail -n 12 "$OUT/pytest-cpu.log"
tail -n 25 "$OUT/pytest.log"
