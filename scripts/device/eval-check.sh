#!/bin/bash
# gpuflow's eval stage against transformers on a GPU machine, in one call:
# a random Llama made by transformers, evaluated by gpuflow apply
# (eval-check.hcl: loss and perplexity on shards of the machine's licence
# texts, multiple-choice scores, greedy completions), then the same
# measures by transformers on the same tokens (eval_check.py compare); the
# trainer's Python tests run beside it.
#
# Here, from the repository root (DIR holds what the machine needs):
#   DIR=.device/eval && mkdir -p $DIR && cp -r plugins/train/trainer scripts/device/eval* $DIR/ &&
#   cp plugins/dataprep/bpe/testdata/vocab/r50k_base.tiktoken.gz $DIR/ &&
#   CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o $DIR/gpuflow ./cmd/gpuflow && gzip -f $DIR/gpuflow
# There, with DIR carried:
#   bash DIR/eval-check.sh DIR
# Results: $OUT/table.md, $OUT/apply.log, $OUT/pytest.log, $OUT/run.log.
set -uo pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(cd "${1:-$HERE}" && pwd)
OUT=${OUT:-/tmp/eval-check-out}
TEXT=${TEXT:-/usr/share/common-licenses/*}
WORK=$(mktemp -d)
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1
T0=$(date +%s)
say() { echo "== $(($(date +%s) - T0))s $*"; }
GF=$WORK/gpuflow
gunzip -c "$DIR/gpuflow.gz" > "$GF" && chmod +x "$GF" || { echo "no $DIR/gpuflow.gz"; exit 1; }

say "trainer tests (background)"
runner="-m pytest -q -p no:cacheprovider tests"
python3 -m pytest --version > /dev/null 2>&1 || runner="-m unittest discover -s tests"
(cd "$DIR/trainer" && timeout -k 5 200 python3 $runner > "$OUT/pytest.log" 2>&1; echo "tests exit $?" >> "$OUT/pytest.log") &
tests=$!

say "make model, questions, prompts"
python3 "$HERE/eval_check.py" make "$WORK" "$TEXT" || exit 1

say "gpuflow apply"
(cd "$WORK" && timeout -k 5 150 "$GF" apply -auto-approve -no-color -var "folder=$WORK/model" -var "text=$TEXT" \
	-var "tokenizer=$DIR/r50k_base.tiktoken.gz" -var "questions=$WORK/questions.jsonl" -var "prompts=$WORK/prompts.jsonl" \
	"$HERE/eval-check.hcl" > "$OUT/apply.log" 2>&1)
say "apply exit $?"
grep -E "measured|succeeded|failed|Error" "$OUT/apply.log" | head -20
run=$(ls -d "$WORK"/.gpuflow/runs/eval.random/*/ 2>/dev/null | tail -1)
[ -n "$run" ] && cp "$run/completions.jsonl" "$run/stdout.log" "$run/stderr.log" "$OUT/" 2>/dev/null

say "transformers on the same tokens"
[ -n "$run" ] && python3 "$HERE/eval_check.py" compare "$WORK" "$run" "$DIR/trainer" > "$OUT/table.md"
say "compare exit $?"

wait $tests
say "tests done"
tail -15 "$OUT/pytest.log"
cat "$OUT/table.md"
