#!/bin/bash
# Sliding-window attention and the eval stage's key-value cache on a GPU
# machine, in one call: the trainer's window and cache tests
# (SlidingWindow*, KVCache*, *AgainstTransformers*), gpuflow's logits
# against transformers' for every hf_check.py architecture (windowed
# Mistral and Qwen2 among them), and eval-check.sh, which runs the whole
# trainer suite beside it.
#
# Here, from the repository root (DIR holds what the machine needs):
#   DIR=.device/window && mkdir -p $DIR && cp -r plugins/train/trainer scripts/device/eval* scripts/device/hf_check.py \
#     scripts/device/window-check.sh $DIR/ && cp plugins/dataprep/bpe/testdata/vocab/r50k_base.tiktoken.gz $DIR/ &&
#   CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o $DIR/gpuflow ./cmd/gpuflow && gzip -f $DIR/gpuflow
# There, with DIR carried:
#   bash DIR/window-check.sh DIR
# Results: $OUT/newtests.log, $OUT/logits.md, $OUT/ec-table.md, $OUT/ec-pytest.log.
set -uo pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
D=$(cd "${1:?usage: window-check.sh DIR}" && pwd)
OUT=${OUT:-/tmp/window-check-out}
W=$(mktemp -d)
mkdir -p "$OUT"
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }
(OUT=$W/ec timeout -k 5 300 bash "$D/eval-check.sh" "$D" > "$W/ec.out" 2>&1) &
ec=$!
(cd "$D/trainer" && timeout -k 5 240 python3 -m pytest -q -p no:cacheprovider -k "SlidingWindow or KVCache or AgainstTransformers" \
	tests/test_trainer.py tests/test_evaluate.py > "$OUT/newtests.log" 2>&1; echo "exit $?" >> "$OUT/newtests.log") &
nt=$!
python3 "$D/hf_check.py" make "$W" > "$W/hfmake.log" 2>&1 || tail -20 "$W/hfmake.log"
timeout 150 python3 "$D/hf_check.py" logits "$W" "$D/trainer" > "$OUT/logits.log" 2>&1
python3 "$D/hf_check.py" table "$W" > "$OUT/logits.md" 2>&1
say "logits done"
wait $nt
say "window and cache tests done"
wait $ec
say "eval-check done"
cp "$W/ec/table.md" "$OUT/ec-table.md"
cp "$W/ec/pytest.log" "$OUT/ec-pytest.log"
echo "--- window and cache tests"; grep -v "^  " "$OUT/newtests.log" | tail -40
echo "--- logits"; cat "$OUT/logits.md"
echo "--- eval-check"; cat "$OUT/ec-table.md"
echo "--- whole suite"; tail -25 "$OUT/ec-pytest.log"
