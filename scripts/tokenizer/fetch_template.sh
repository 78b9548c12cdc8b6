#!/usr/bin/env bash
# Fetches a model's chat template, as the model's own tokenizer_config.json
# carries it, from the npm package @huggingface/ollama-utils (MIT), whose
# chat-template map holds the Jinja templates of many models, and writes it
# to DEST/chat_template.jinja. The Llama 3.1 licence asks that its files
# travel with its notice, so the template is fetched, not committed.
#   scripts/tokenizer/fetch_template.sh library/llama3.1:8b .tokenizers/llama3_1_tools
#   scripts/tokenizer/fetch_template.sh library/qwen2:0.5b .tokenizers/qwen2
set -euo pipefail
model=$1
dest=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@huggingface/ollama-utils@0.0.18" >/dev/null && tar xzf ./*.tgz)
mkdir -p "$dest"
node "$(dirname "$0")/template_map.js" "$tmp/package/src/chat-template-automap.ts" "$model" >"$dest/chat_template.jinja.tmp"
mv "$dest/chat_template.jinja.tmp" "$dest/chat_template.jinja"
echo "$dest/chat_template.jinja"
