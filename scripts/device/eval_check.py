"""Makes what eval-check.hcl evaluates, and compares gpuflow's measures
with transformers' on the same tokens. scripts/device/eval-check.sh runs it.

  make WORK TEXT_GLOB          a random Llama (transformers), questions and prompts
  compare WORK RUN TRAINER     the table: gpuflow's loss, perplexity, choice
                               scores and greedy completions beside transformers'
"""

import glob
import json
import math
import os
import sys

import numpy as np
import torch

SEQ = 256
VOCAB = 50304  # r50k_base's 50257 tokens, padded to a multiple of 64


def make(work, text_glob):
    from transformers import AutoModelForCausalLM, LlamaConfig
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                      vocab_size=VOCAB, max_position_embeddings=SEQ, rms_norm_eps=1e-5, tie_word_embeddings=False,
                      initializer_range=0.05)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    with torch.no_grad():  # norms away from one, so every weight matters
        for n, p in model.named_parameters():
            if "norm" in n:
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(os.path.join(work, "model"))
    lines = []
    for path in sorted(glob.glob(text_glob)):
        try:
            with open(path, encoding="utf-8") as f:
                lines += [" ".join(l.split()) for l in f if len(l.split()) >= 10]
        except (UnicodeDecodeError, IsADirectoryError):
            continue
    rng = np.random.default_rng(0)
    picked = [lines[i] for i in rng.choice(len(lines), size=60, replace=False)]
    questions = []
    for i, line in enumerate(picked[:40]):
        words = line.split()
        right = " " + " ".join(words[6:12])
        wrong = [" " + " ".join(picked[(i + k) % 60].split()[6:12]) for k in (7, 19, 31)]
        label = int(rng.integers(4))
        choices = wrong[:label] + [right] + wrong[label:]
        questions.append({"context": " ".join(words[:6]), "choices": choices, "label": label})
    write_jsonl(os.path.join(work, "questions.jsonl"), questions)
    write_jsonl(os.path.join(work, "prompts.jsonl"), [{"id": i, "prompt": " ".join(l.split()[:5])} for i, l in enumerate(picked[40:48])])
    print(f"made {work}/model and {len(questions)} questions, 8 prompts from {len(lines)} lines", flush=True)


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def gpuflow_result(run):
    with open(os.path.join(run, "stdout.log")) as f:
        for line in f:
            line = line.split(":", 1)[1] if line.startswith("[") else line
            if line.startswith("{") and '"event": "eval"' in line:
                return json.loads(line)["eval"]
    raise SystemExit(f"no eval event in {run}/stdout.log")


@torch.no_grad()
def hf_loss(model, shards, n, batch):
    total, count = 0.0, 0
    for i in range(0, n, batch):
        t = torch.from_numpy(np.stack([shards.sample(j) for j in range(i, min(n, i + batch))])).cuda()
        logits = model(t[:, :-1]).logits
        total += torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(), t[:, 1:].flatten(), reduction="sum").double().item()
        count += t[:, 1:].numel()
    return total / count, count


@torch.no_grad()
def hf_scores(model, questions, E):
    out = []
    for q in questions:
        lls = []
        for cont in q["continuations"]:
            row = E.window(q["context"], cont, SEQ)
            logp = torch.log_softmax(model(torch.tensor([row]).cuda()).logits[0].float(), dim=-1)
            lls.append(E.continuation_score(logp, len(row), cont)[0])
        out.append(lls)
    return out


def accuracy(scores, questions):
    right = norm = 0
    for lls, q in zip(scores, questions):
        right += int(np.argmax(lls)) == q["label"]
        norm += int(np.argmax([ll / len(c.encode()) for ll, c in zip(lls, q["choices"])])) == q["label"]
    return right / len(questions), norm / len(questions)


def compare(work, run, trainer):
    sys.path.insert(0, trainer)
    import config as C
    import evaluate as E
    from data import TokenShards
    from transformers import AutoModelForCausalLM
    cfg = C.load(os.path.join(run, "config.json"), C.EvalConfig)
    got = gpuflow_result(run)
    shards = TokenShards(cfg.data, SEQ)
    n = min(shards.samples, max(1, cfg.max_tokens // SEQ)) if cfg.max_tokens else shards.samples
    batch = cfg.layout.micro_batch
    folder = os.path.join(work, "model")
    models = {dt: AutoModelForCausalLM.from_pretrained(folder, dtype=dt).cuda().eval() for dt in (torch.bfloat16, torch.float32)}
    bf16, count = hf_loss(models[torch.bfloat16], shards, n, batch)
    fp32, _ = hf_loss(models[torch.float32], shards, n, batch)
    rows = [("tokens scored", got["valid_tokens"], count, count),
            ("loss (nats/token)", got["valid_loss"], bf16, fp32),
            ("perplexity", got["valid_perplexity"], math.exp(bf16), math.exp(fp32))]
    tokq = read_jsonl(cfg.choices.questions)
    orig = read_jsonl(os.path.join(work, "questions.jsonl"))
    mine = [s["loglikelihoods"] for s in read_jsonl(cfg.choices.scores)]
    theirs = {dt: hf_scores(m, tokq, E) for dt, m in models.items()}
    acc, acc_norm = accuracy(mine, orig)
    acc_b, norm_b = accuracy(theirs[torch.bfloat16], orig)
    acc_f, norm_f = accuracy(theirs[torch.float32], orig)
    worst = max(abs(a - b) for x, y in zip(mine, theirs[torch.float32]) for a, b in zip(x, y))
    rows += [("multiple choice acc", acc, acc_b, acc_f), ("multiple choice acc_norm", acc_norm, norm_b, norm_f),
             ("largest choice log-likelihood gap to fp32", 0.0, None, worst)]
    prompts = read_jsonl(cfg.generate.prompts)
    comps = read_jsonl(cfg.generate.completions)
    same = {}
    for dt, m in models.items():
        m.generation_config.eos_token_id = None
        k = 0
        for p, c in zip(prompts, comps):
            t = torch.tensor([p["tokens"]]).cuda()
            want = m.generate(t, max_new_tokens=16, do_sample=False, attention_mask=torch.ones_like(t), pad_token_id=0)[0, t.shape[1]:].tolist()
            k += c["tokens"] == want
        same[dt] = k
    rows.append(("greedy completions identical (of %d)" % len(prompts), len(prompts), same[torch.bfloat16], same[torch.float32]))
    print(f"| measure | gpuflow eval (bf16, {n} samples of {SEQ + 1}) | transformers bf16 | transformers fp32 | gpuflow vs fp32 |")
    print("|---|---|---|---|---|")
    for name, g, b, f in rows:
        rel = "" if not isinstance(f, float) or f == 0 or name.startswith("largest") else f"{100 * (g - f) / f:+.3f}%"
        print(f"| {name} | {fmt(g)} | {fmt(b)} | {fmt(f)} | {rel} |")
    print(f"\nln(vocab) = {math.log(VOCAB):.4f} (the loss of a uniform guess)")


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.5g}"
    return str(v)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        raise SystemExit(__doc__)
