#!/usr/bin/env bash
# Regenerates plugins/dataprep/bpe/unicode_tables.go from Hugging Face
# tokenizers' Node binding, installed from the npm registry into a temporary
# folder. Needs node and npm.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm install --silent --no-save --prefix "$tmp" tokenizers@0.23.2
node "$here/unicode-classes.js" "$tmp/node_modules" "$here/../../plugins/dataprep/bpe/unicode_tables.go"
gofmt -w "$here/../../plugins/dataprep/bpe/unicode_tables.go"
