#!/bin/bash
# Loss parallelism, tied embeddings, LoRA, loss masks and fp16's loss
# scaling under TP, PP and FSDP2
# on CPU ranks over gloo (limits_check.py: 50 steps against one process,
# 2 and 4 ranks; limits_masks.py: prompt tokens' logits get no gradient
# under tp2 and pp2), and the trainer's own tests, in one call on a GPU
# machine.
#
# Here, from the repository root (DIR holds what the machine needs):
#   DIR=.device/limits && mkdir -p $DIR && cp -r plugins/train/trainer $DIR/ &&
#   cp scripts/device/limits* scripts/device/train_correctness.py $DIR/
# There, with DIR carried:
#   bash DIR/limits-check.sh DIR
# Results: $OUT/table.md, $OUT/check.log, $OUT/tests.log, $OUT/logs.tgz.
# ONLY=GROUP.LAYOUT,... runs those alone (limits_check.py --only) and
# TESTS=0 leaves the trainer's tests out.
set -uo pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
DIR=$(cd "${1:?usage: limits-check.sh DIR}" && pwd)
OUT=${OUT:-/tmp/limits-check-out}
WORK=$(mktemp -d)
mkdir -p "$OUT"
(
	[ "${TESTS:-1}" = 0 ] && exit 0
	cd "$DIR/trainer" || exit 1
	if python3 -c "import pytest" 2>/dev/null; then
		timeout 300 python3 -m pytest -q tests
	else
		timeout 300 python3 -m unittest discover -s tests
	fi
) > "$OUT/tests.log" 2>&1 &
tests=$!
python3 "$DIR/limits_check.py" "$WORK" --trainer "$DIR/trainer" --md "$OUT/table.md" --jobs "${JOBS:-6}" --only "${ONLY:-}" 2>&1 | tee "$OUT/check.log"
check=${PIPESTATUS[0]}
wait $tests
echo "trainer tests exit $?:"
tail -15 "$OUT/tests.log"
tar czf "$OUT/logs.tgz" --exclude='*.safetensors' --exclude='*.bin' -C "$WORK" . 2>/dev/null
exit $check
