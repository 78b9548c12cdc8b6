"""The evaluation with its weights sharded over two GPUs (fsdp = true, NCCL
gathering them) against one GPU holding them whole: the same loss, choice
scores and greedy completions, of a model and of LoRA adapters over it.
The model, data and adapters are the trainer's ShardedTest's and
ShardedLoRATest's (tests/test_evaluate.py), which check the same on CPU
ranks; here they run in bf16 on GPUs with greedy decoding.

  python3 eval_sharded.py make WORK --trainer DIR
  python3 eval_sharded.py run NAME WORK --trainer DIR [--timeout S]   # GPUs from CUDA_VISIBLE_DEVICES
  python3 eval_sharded.py compare WORK [--md OUT.md]

NAME is whole or sharded, lora-whole or lora-sharded; make writes the
model, the loss's samples, the questions and the prompts they share.
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from train_correctness import last_line, launch, stop_runs_on_sigterm  # noqa: E402

# The ranks' shares are uneven (9 samples in micro-batches of 2, 9
# questions, 7 prompts) and the completions stop at different lengths
# (one token in twelve ends one), so every loop of the sharded run makes
# forwards on a rank that has nothing left.
SAMPLES, QUESTIONS, PROMPTS, NEW_TOKENS = 9, 9, 7, 10
RUNS = {"whole": (1, False, False), "sharded": (2, True, False), "lora-whole": (1, False, True), "lora-sharded": (2, True, True)}
# Both runs hold the same bf16 weights (FSDP2 gathers them bit for bit) and
# make forwards of the same shapes (micro-batches of 2 and 1 samples, one
# question's continuations, one prompt's row), but the loss's
# micro-batches pair other samples (rank 0 holds samples 0, 2, 4, ...),
# and a GPU's matrix kernels need not give a row the same bits beside
# another row. The loss averages 288 tokens' cross-entropies, each within
# a bf16 step (2^-8) of its logits: 0.1% of the loss. A continuation sums
# at most 4 tokens' log-probabilities, each within a bf16 step of logits
# under 4 (2^-6): 4 * 2^-6 nats.
LOSS_TOLERANCE = 1e-3
CHOICE_TOLERANCE = 4 * 2**-6
# Greedy decoding runs the same batches of consecutive prompts (2 a batch,
# the batches dealt round robin over the ranks) on both runs, through the
# same weights: the same logits, so the same tokens, ties broken alike;
# tokens must be identical.


def trainer_tests(trainer):
    sys.path.insert(0, os.path.join(trainer, "tests"))
    sys.path.insert(0, trainer)
    import test_evaluate
    return test_evaluate


def make(a):
    import numpy as np
    T = trainer_tests(a.trainer)
    os.makedirs(a.work, exist_ok=True)
    T.make_model(os.path.join(a.work, "model"))
    rng = np.random.default_rng(5)
    T.write_shard(a.work + "/valid", [rng.integers(0, 128, size=SAMPLES * T.SEQ + 1)])
    T.E.write_jsonl(a.work + "/questions.jsonl", [
        {"context": rng.integers(0, 128, size=int(rng.integers(3, 40))).tolist(),
         "continuations": [rng.integers(0, 128, size=int(rng.integers(1, 5))).tolist() for _ in range(3)]} for _ in range(QUESTIONS)])
    T.E.write_jsonl(a.work + "/prompts.jsonl", [{"tokens": rng.integers(0, 128, size=int(rng.integers(1, 9))).tolist()}
                                                 for _ in range(PROMPTS)])
    # ShardedLoRATest's adapters, written beside the model.
    T.ShardedLoRATest.work = a.work
    T.ShardedLoRATest.edit({"weights": os.path.join(a.work, "model")})
    print(f"made {a.work}/model, {SAMPLES} samples, {QUESTIONS} questions, {PROMPTS} prompts, adapters", flush=True)
    return 0


def config(T, work, name):
    ranks, fsdp, lora = RUNS[name]
    folder = os.path.join(work, name)
    cfg = T.eval_config(work, os.path.join(work, "model"))
    cfg["device"] = "cuda"
    cfg["choices"]["scores"] = folder + "/scores.jsonl"
    cfg["generate"].update(completions=folder + "/completions.jsonl", max_new_tokens=NEW_TOKENS, temperature=0, top_p=1,
                           stop=list(range(0, 128, 12)))
    cfg["layout"].update(dp=ranks, fsdp=fsdp, global_batch=2 * ranks, micro_batch=2, precision="bf16")
    if lora:
        T.ShardedLoRATest.work = work
        T.ShardedLoRATest.edit(cfg)
    return cfg


def run(a):
    T = trainer_tests(a.trainer)
    folder = os.path.join(a.work, a.name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "config.json")
    with open(path, "w") as f:
        json.dump(config(T, a.work, a.name), f, indent=1)
    rc = launch([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", f"--nproc-per-node={RUNS[a.name][0]}",
                 os.path.join(a.trainer, "evaluate.py"), "--config", path], folder, os.environ, a.timeout)
    print(f"eval {a.name}: exit {rc}", flush=True)
    return 0 if rc == 0 else 1


def read(work, name):
    """A run's eval event, choice scores and completions, or why not."""
    folder = os.path.join(work, name)
    result = None
    if os.path.exists(folder + "/stdout.log"):
        with open(folder + "/stdout.log") as f:
            for line in f:
                if line.startswith("{") and '"event": "eval"' in line:
                    result = json.loads(line)["eval"]
    if result is None or not os.path.exists(folder + "/completions.jsonl"):
        return None, last_line(folder + "/stderr.log")[:300] or "no eval event"
    with open(folder + "/scores.jsonl") as f:
        scores = [json.loads(l) for l in f if l.strip()]
    with open(folder + "/completions.jsonl") as f:
        completions = [json.loads(l) for l in f if l.strip()]
    return (result, scores, completions), ""


def rows(work, whole, sharded, words):
    """The three rows of one pair of runs, and whether all hold."""
    w, err_w = read(work, whole)
    s, err_s = read(work, sharded)
    against = f"2 GPUs, fsdp = true, against 1 GPU whole ({words})"
    if w is None or s is None:
        why = err_s or err_w
        return [f"| sharded evaluation, {part} ({words}) | {against} | | | NO: {why} |" for part in ("loss", "choice scores", "greedy completions")], False
    (rw, sw, cw), (rs, ss, cs) = w, s
    loss = abs(rs["valid_loss"] - rw["valid_loss"]) / rw["valid_loss"]
    loss_ok = loss <= LOSS_TOLERANCE and rs["valid_tokens"] == rw["valid_tokens"]
    choice = max((abs(x - y) for a, b in zip(ss, sw) for x, y in zip(a["loglikelihoods"], b["loglikelihoods"])), default=math.inf)
    greedy_same = len(ss) == len(sw) == QUESTIONS and all(a["greedy"] == b["greedy"] for a, b in zip(ss, sw))
    choice_ok = choice <= CHOICE_TOLERANCE and greedy_same
    same = sum(a == b for a, b in zip(cs, cw))
    lengths = len({len(c["tokens"]) for c in cw})
    done_ok = len(cs) == len(cw) == PROMPTS and same == PROMPTS
    out = [f"| sharded evaluation, loss ({words}) | {against}: {rw['valid_tokens']} tokens, loss {rw['valid_loss']:.5f} whole | "
           f"{loss:.2e} relative ({rs['valid_tokens']} tokens) | {LOSS_TOLERANCE:.0e} | {'yes' if loss_ok else 'NO'} |",
           f"| sharded evaluation, choice scores ({words}) | {against}: {QUESTIONS} questions' log-likelihoods, greedy flags | "
           f"{choice:.2e} nats{'' if greedy_same else ', greedy flags differ'} | {CHOICE_TOLERANCE:.4f} nats | {'yes' if choice_ok else 'NO'} |",
           f"| sharded evaluation, greedy completions ({words}) | {against}: {PROMPTS} prompts, up to {NEW_TOKENS} tokens, "
           f"{lengths} lengths | {PROMPTS - same} of {PROMPTS} differ | identical tokens | {'yes' if done_ok else 'NO'} |"]
    return out, loss_ok and choice_ok and done_ok


def compare(a):
    table = ["| check | compares | largest difference | tolerance | holds |", "|---|---|---|---|---|"]
    model, ok = rows(a.work, "whole", "sharded", "a model")
    lora, lora_ok = rows(a.work, "lora-whole", "lora-sharded", "LoRA adapters over it")
    text = "\n".join(table + model + lora)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text + "\n")
    return 0 if ok and lora_ok else 1


def main():
    stop_runs_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("work")
    m.add_argument("--trainer", required=True)
    r = sub.add_parser("run")
    r.add_argument("name", choices=sorted(RUNS))
    r.add_argument("work")
    r.add_argument("--trainer", required=True)
    r.add_argument("--timeout", type=int, default=120)
    c = sub.add_parser("compare")
    c.add_argument("work")
    c.add_argument("--md")
    a = ap.parse_args()
    if getattr(a, "trainer", None):
        a.trainer = os.path.abspath(a.trainer)
    sys.exit({"make": make, "run": run, "compare": compare}[a.cmd](a))


if __name__ == "__main__":
    main()
