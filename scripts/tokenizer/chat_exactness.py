"""Compares gpuflow's chat renders with transformers' apply_chat_template.

  python3 scripts/tokenizer/chat_exactness.py TOKENIZERS TESTDATA

TOKENIZERS holds one folder per model: tokenizer.json and
tokenizer_config.json as scripts/tokenizer/fetch.sh writes them, or
chat_template.jinja as scripts/tokenizer/fetch_template.sh writes it;
TESTDATA is plugins/dataprep/chat/testdata, whose records.jsonl is
rendered whole and as the prompt before its last turn, and compared byte
for byte with golden/MODEL-RECORD.txt and golden/MODEL-RECORD.prompt.txt,
and whose templates/ holds the committed templates. The models, their
files and special tokens are those of the Go test (golden_test.go).
"""
import json
import os
import sys

import transformers
from transformers import PreTrainedTokenizerFast

# name: (template file, bos, eos); None reads them from tokenizer_config.json.
MODELS = {
    "llama3_1": ("TOKENIZERS/llama3_1/tokenizer_config.json", None, None),
    "llama3_1_tools": ("TOKENIZERS/llama3_1_tools/chat_template.jinja", "<|begin_of_text|>", "<|eot_id|>"),
    "qwen2": ("TOKENIZERS/qwen2/chat_template.jinja", None, "<|im_end|>"),
    "qwen2_5": ("TOKENIZERS/qwen2_5/tokenizer_config.json", None, None),
    "qwen3": ("TOKENIZERS/qwen3/tokenizer_config.json", None, None),
    "mistral": ("TESTDATA/templates/mistral.jinja", "<s>", "</s>"),
}
# Records Mistral's template refuses, with its words (TestTemplateRefuses).
REFUSALS = [
    ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
     "After the optional system message, conversation roles must alternate user/assistant/user/assistant/..."),
    ([{"role": "user", "content": "a"}, {"role": "assistant", "content": "",
      "tool_calls": [{"id": "abc", "function": {"name": "f", "arguments": {}}}]}],
     "Tool call IDs should be alphanumeric strings with length 9!"),
]
SHAREGPT = {"system": "system", "human": "user", "user": "user",
            "gpt": "assistant", "assistant": "assistant", "tool": "tool"}


def main(tokenizers, testdata):
    rows = []
    for model, (path, bos, eos) in MODELS.items():
        path = path.replace("TOKENIZERS", tokenizers).replace("TESTDATA", testdata)
        if path.endswith(".json"):
            cfg = json.load(open(path))
            template, bos, eos = cfg["chat_template"], cfg.get("bos_token"), cfg.get("eos_token")
            vocab = os.path.join(os.path.dirname(path), "tokenizer.json")
        else:
            template = open(path, encoding="utf-8").read()
            # Rendering with tokenize=False reads no vocabulary: any
            # tokenizer.json serves.
            vocab = os.path.join(tokenizers, "llama3_1", "tokenizer.json")
        tok = PreTrainedTokenizerFast(tokenizer_file=vocab, chat_template=template,
                                      bos_token=bos, eos_token=eos)
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
        if model == "mistral":
            for k, (msgs, want) in enumerate(REFUSALS):
                try:
                    tok.apply_chat_template(msgs, tokenize=False)
                    said = None
                except Exception as err:  # jinja2's TemplateError
                    said = str(err)
                rows.append((f"mistral-refusal-{k}", 0, said == want))
    print("transformers", transformers.__version__)
    print(f"{'render':40s} {'bytes':>6s} identical")
    for name, size, same in rows:
        print(f"{name:40s} {size:6d} {same}")
    same = sum(r[2] for r in rows)
    print(f"{same}/{len(rows)} byte-identical")
    return 0 if same == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
