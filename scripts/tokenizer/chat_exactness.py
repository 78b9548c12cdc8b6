"""Compares gpuflow's chat renders with transformers' apply_chat_template.

  python3 scripts/tokenizer/chat_exactness.py TOKENIZERS TESTDATA

TOKENIZERS holds one folder per model (tokenizer.json and
tokenizer_config.json, as scripts/tokenizer/fetch.sh writes them);
TESTDATA is plugins/dataprep/chat/testdata, whose records.jsonl is
rendered whole and as the prompt before its last turn, and compared byte
for byte with golden/MODEL-RECORD.txt and golden/MODEL-RECORD.prompt.txt.
"""
import json
import os
import sys

import transformers
from transformers import PreTrainedTokenizerFast

MODELS = ["llama3_1", "qwen2_5", "qwen3"]
SHAREGPT = {"system": "system", "human": "user", "user": "user",
            "gpt": "assistant", "assistant": "assistant", "tool": "tool"}


def main(tokenizers, testdata):
    rows = []
    for model in MODELS:
        folder = os.path.join(tokenizers, model)
        cfg = json.load(open(os.path.join(folder, "tokenizer_config.json")))
        tok = PreTrainedTokenizerFast(
            tokenizer_file=os.path.join(folder, "tokenizer.json"),
            chat_template=cfg["chat_template"],
            bos_token=cfg.get("bos_token"), eos_token=cfg.get("eos_token"))
        for line in open(os.path.join(testdata, "records.jsonl"), encoding="utf-8"):
            rec = json.loads(line)
            msgs = rec.get("messages") or [
                {"role": SHAREGPT[t["from"]], "content": t["value"]} for t in rec["conversations"]]
            for suffix, m, gen in [("", msgs, False), (".prompt", msgs[:-1], True)]:
                ref = tok.apply_chat_template(m, tools=rec.get("tools"), tokenize=False,
                                              add_generation_prompt=gen)
                name = f"{model}-{rec['name']}{suffix}.txt"
                with open(os.path.join(testdata, "golden", name), encoding="utf-8", newline="") as f:
                    got = f.read()
                rows.append((name, len(ref.encode()), got == ref))
    print("transformers", transformers.__version__)
    print(f"{'render':32s} {'bytes':>6s} identical")
    for name, size, same in rows:
        print(f"{name:32s} {size:6d} {same}")
    same = sum(r[2] for r in rows)
    print(f"{same}/{len(rows)} byte-identical")
    return 0 if same == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
