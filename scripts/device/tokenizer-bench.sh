#!/usr/bin/env bash
# Side-by-side tokens/s of gpuflow's Go BPE (plugins/dataprep/bpe) and
# Hugging Face tokenizers, on the same vocabulary (o200k as tokenizer.json)
# and the same text (the Jargon File from Debian's jargon-text package);
# then numpy reads the shard writer's golden Megatron (MMIDIDX) and .npy
# files with scripts/device/shard_check.py.
#
# Here (builds the Go benchmark binary, gathers vocabulary and corpus):
#   apt-get install -y jargon-text     # once
#   scripts/device/tokenizer-bench.sh build
# On the device, in one call carrying .device/tokenizer-bench:
#   bash scripts/device/tokenizer-bench.sh run
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir="$root/.device/tokenizer-bench"
corpus_src=${GPUFLOW_TOKENIZER_CORPUS:-/usr/share/doc/jargon-text/jargon.txt.gz}

build() {
  mkdir -p "$dir"
  if [ ! -f "$corpus_src" ]; then
    echo "no corpus at $corpus_src: apt-get install jargon-text, or set GPUFLOW_TOKENIZER_CORPUS" >&2
    exit 1
  fi
  (cd "$root" && CGO_ENABLED=0 go test -c -o "$dir/bpe.test" ./plugins/dataprep/bpe)
  gunzip -c "$root/plugins/dataprep/bpe/testdata/vocab/gpt4o.tokenizer.json.gz" >"$dir/tokenizer.json"
  case "$corpus_src" in
    *.gz) gunzip -c "$corpus_src" >"$dir/corpus.txt" ;;
    *) cp "$corpus_src" "$dir/corpus.txt" ;;
  esac
  ls -la "$dir"
}

run() {
  python3 "$root/scripts/device/tokenizer_bench.py" \
    --go-test "$dir/bpe.test" --vocab "$dir/tokenizer.json" --corpus "$dir/corpus.txt" \
    --threads "$(nproc)"
  local golden="$root/plugins/dataprep/shard/testdata"
  python3 "$root/scripts/device/shard_check.py" \
    "$golden/megatron_uint16" "$golden/tokens_uint16.npy" "$golden/tokens_uint32.npy"
}

case "${1:-}" in
  build) build ;;
  run) run ;;
  *) echo "usage: $0 build|run" >&2; exit 2 ;;
esac
