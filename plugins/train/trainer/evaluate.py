"""gpuflow's evaluator for eval stages, one process per GPU (or CPU rank)
under torchrun, each holding the whole model:

  python3 -m torch.distributed.run --standalone --nproc-per-node=N evaluate.py --config config.json

config.json is written by plugins/train (eval.go: evalConfig). The ranks
split the work (samples, questions, prompts) and sum or gather the results;
rank 0 reports on stdout as the trainer does (report.py), with one "eval"
event carrying the measures, and writes the answer files.

Text never reaches this process: gpuflow tokenizes prompts and questions
with the stage's tokenizer before the launch, and decodes completions
after it, so the ids here are the data prep's.

  data      loss and perplexity over Megatron shards, every sample of
            seq_len+1 tokens in order (or the first max_tokens' worth).
  choices   per question, the log-likelihood of each continuation given
            the context, as lm-evaluation-harness computes it: the sum of
            the continuation tokens' log-probabilities, context and
            continuation cut from the left to seq_len+1 tokens.
  generate  a completion per prompt, greedy at temperature 0, else sampled
            (temperature, top_p) from a generator seeded per prompt, so a
            completion does not depend on how prompts fall on ranks. The
            prompt runs once; each new token then runs alone against a
            key-value cache of the tokens before it (model.KVCache).
            Prompts run one at a time.
"""

import argparse
import json
import math
import os
import sys
import time
import traceback

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

import ckpt
import config
import hf
import model as M
import models
from data import DataError, TokenShards
from lora import add_adapters, is_adapter
from report import Reporter, TrainerError

ADAPTERS_FILE = "adapters.safetensors"


class Evaluator:
    def __init__(self, cfg, rep):
        self.cfg, self.rep = cfg, rep
        self.cpu = cfg.device == "cpu"
        try:
            self.args, self.family = models.model_args(cfg.model)
        except (OSError, ValueError, KeyError, models.UnsupportedModel) as e:
            raise TrainerError("Model folder unusable", f"{cfg.model.hf}: {e}") from e

    def run(self):
        self._init_distributed()
        self.model = self._load()
        out = {}
        t0 = time.perf_counter()
        if self.cfg.data:
            out.update(self.loss())
        if self.cfg.choices:
            out.update(self.choices())
        if self.cfg.generate:
            out.update(self.generate())
        out["eval_time_s"] = time.perf_counter() - t0
        self.rep.emit("eval", eval=out)

    # -- set-up ------------------------------------------------------------

    def _init_distributed(self):
        if self.cpu:
            self.device = torch.device("cpu")
            dist.init_process_group("gloo")
        else:
            if not torch.cuda.is_available():
                raise TrainerError("No GPU", "PyTorch sees no CUDA GPU on this machine; set device = \"cpu\" to evaluate on CPU cores.")
            self.device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(self.device)
            dist.init_process_group("nccl", device_id=self.device)
        self.rank, self.world = dist.get_rank(), dist.get_world_size()

    def _load(self):
        """The whole model on this rank: the weights (with a LoRA
        checkpoint's adapters over its base), in bf16 on a GPU, fp32 on CPU."""
        cfg = self.cfg
        with torch.device(self.device):
            m = M.Transformer(self.args)
        if cfg.base:
            lora, adapters = read_adapters(cfg.weights)
            add_adapters(m, lora)
            self._weights(m, cfg.base, cfg.base_format, lambda k: not is_adapter(k))
            load_adapters(m, adapters, cfg.weights)
            self.rep.log(f"LoRA adapters (rank {lora.rank}, targets {', '.join(lora.targets)}) from {cfg.weights} over {cfg.base}")
        else:
            self._weights(m, cfg.weights, cfg.weights_format, lambda k: True)
        if not self.cpu:
            m.to(torch.bfloat16)
        m.init_buffers(self.device)  # the rotary table stays fp32
        m.eval()
        params = sum(p.numel() for k, p in m.named_parameters() if not is_adapter(k))
        self.rep.log(f"model: {params / 1e6:.1f}M parameters, "
                     f"{'fp32 on CPU' if self.cpu else 'bf16'}, on {self.world} rank(s)")
        return m

    def _weights(self, m, path, fmt, keep):
        try:
            if fmt == "hf":
                line, _ = hf.load_report(path, [m], self.family.to_hf, keep, self.device)
                self.rep.log(line)
            else:
                ckpt.load_weights(path, [m], keep=keep)
        except Exception as e:
            raise TrainerError("Weights do not fit the model", f"{path}: {type(e).__name__}: {e}") from e

    # -- loss on shards ----------------------------------------------------

    @torch.no_grad()
    def loss(self):
        seq = self.args.seq_len
        try:
            shards = TokenShards(self.cfg.data, seq)
        except DataError as e:
            raise TrainerError("Evaluation data unreadable", str(e)) from e
        n = shards.samples
        if self.cfg.max_tokens:
            n = min(n, max(1, self.cfg.max_tokens // seq))
        mine = list(range(self.rank, n, self.world))
        batch = max(1, self.cfg.layout.micro_batch)
        sums = torch.zeros(2, dtype=torch.float64, device=self.device)
        for i in range(0, len(mine), batch):
            tokens = torch.from_numpy(np.stack([shards.sample(j) for j in mine[i:i + batch]])).to(self.device)
            self._check_vocab(tokens)
            logits = forward(self.model, tokens[:, :-1])
            sums[0] += F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten(), reduction="sum").double()
            sums[1] += tokens[:, 1:].numel()
        dist.all_reduce(sums)
        loss = float(sums[0] / sums[1])
        self.rep.log(f"loss {loss:.4f} over {int(sums[1])} tokens ({n} samples of {seq + 1})")
        return {"valid_loss": loss, "valid_perplexity": math.exp(min(loss, 700.0)), "valid_tokens": int(sums[1])}

    def _check_vocab(self, tokens):
        top = int(tokens.max())
        if top >= self.args.vocab:
            raise TrainerError("Token beyond the vocabulary", f"The input holds token id {top}, but the model's vocab is {self.args.vocab}; "
                               "evaluate with the tokenizer the model was trained with.")

    # -- multiple choice ---------------------------------------------------

    @torch.no_grad()
    def choices(self):
        c = self.cfg.choices
        questions = read_jsonl(c.questions)
        scores = {}
        for i in range(self.rank, len(questions), self.world):
            q = questions[i]
            scores[i] = self._loglikelihoods(q["context"], q["continuations"])
        every = gather(scores, self.world)
        if self.rank == 0:
            write_jsonl(c.scores, [{"loglikelihoods": every[i][0], "greedy": every[i][1]} for i in range(len(questions))])
        self.rep.log(f"scored {sum(len(q['continuations']) for q in questions)} choices of {len(questions)} questions")
        return {"questions": len(questions)}

    def _loglikelihoods(self, context, continuations):
        """Each continuation's summed log-probability after context, and
        whether it is the greedy one, in one right-padded batch."""
        rows = [window(context, cont, self.args.seq_len) for cont in continuations]
        width = max(len(r) for r in rows)
        tokens = torch.zeros((len(rows), width), dtype=torch.long)
        for k, r in enumerate(rows):
            tokens[k, :len(r)] = torch.tensor(r)
        tokens = tokens.to(self.device)
        self._check_vocab(tokens)
        logp = F.log_softmax(forward(self.model, tokens).float(), dim=-1)
        lls, greedy = [], []
        for k, (r, cont) in enumerate(zip(rows, continuations)):
            ll, g = continuation_score(logp[k], len(r), cont)
            lls.append(ll)
            greedy.append(g)
        return lls, greedy

    # -- generation --------------------------------------------------------

    @torch.no_grad()
    def generate(self):
        g = self.cfg.generate
        prompts = read_jsonl(g.prompts)
        done = {}
        for i in range(self.rank, len(prompts), self.world):
            done[i] = self._complete(prompts[i]["tokens"], g, i)
        every = gather(done, self.world)
        if self.rank == 0:
            write_jsonl(g.completions, [{"tokens": every[i][0], "finish": every[i][1]} for i in range(len(prompts))])
        made = sum(len(every[i][0]) for i in range(len(prompts)))
        self.rep.log(f"generated {made} tokens for {len(prompts)} prompts")
        return {"prompts": len(prompts), "generated_tokens": made}

    def _complete(self, prompt, g, index):
        """New tokens after prompt (cut from the left to leave room for
        max_new_tokens), and why they ended: "eos" or "length". The prompt
        runs once, then each new token alone against the key-value cache."""
        seq, new = self.args.seq_len, g.max_new_tokens
        tokens = list(prompt[-max(1, seq - new):])
        gen = torch.Generator().manual_seed(M.param_seed(self.cfg.seed, f"prompt{index}"))
        cache, fed = M.KVCache(), 0
        out = []
        while len(out) < new and len(tokens) < seq:
            t = torch.tensor([tokens[fed:]], device=self.device)
            self._check_vocab(t)
            logits = forward(self.model, t, start=fed, cache=cache)
            fed = len(tokens)
            nxt = pick(logits[0, -1].float().cpu(), g.temperature, g.top_p, gen)
            out.append(nxt)
            tokens.append(nxt)
            if nxt in g.stop:
                return out, "eos"
        return out, "length"


def forward(m, tokens, start=0, cache=None):
    """m's logits for tokens at positions start.. (at most seq_len in all):
    the model's rotary table, made for seq_len positions, cut to the
    input's for the call. With a KVCache, tokens follow those the cache
    holds."""
    full = m.rope
    m.rope = full[:, start:start + tokens.shape[1]]
    try:
        return m(tokens, cache)
    finally:
        m.rope = full


def window(context, continuation, seq_len):
    """The model's input for a continuation: context and continuation cut
    from the left to seq_len+1 tokens, less the last (whose successor is
    not scored), as lm-evaluation-harness builds it."""
    whole = (list(context) + list(continuation))[-(seq_len + 1):]
    return whole[:-1]


def continuation_score(logp, length, continuation):
    """The summed log-probability of continuation, which ends the row of
    `length` inputs whose log-probabilities are logp (seq, vocab), and
    whether every continuation token is the most likely one."""
    n = len(continuation)
    target = torch.tensor(continuation, device=logp.device)
    rows = logp[length - n:length]
    picked = rows.gather(1, target[:, None])[:, 0]
    return float(picked.sum()), bool((rows.argmax(dim=-1) == target).all())


def pick(logits, temperature, top_p, gen):
    """The next token: the most likely at temperature 0, else sampled from
    the smallest set of tokens whose probability reaches top_p."""
    if temperature <= 0:
        return int(logits.argmax())
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1:
        sorted_p, order = probs.sort(descending=True)
        keep = sorted_p.cumsum(0) - sorted_p < top_p  # the first always stays
        return int(order[torch.multinomial(sorted_p * keep, 1, generator=gen)])
    return int(torch.multinomial(probs, 1, generator=gen))


def read_adapters(checkpoint):
    """A LoRA fine-tune's adapters and their settings, from the
    adapters.safetensors the trainer writes into its last checkpoint."""
    from safetensors import safe_open
    path = checkpoint if checkpoint.endswith(".safetensors") else os.path.join(checkpoint, ADAPTERS_FILE)
    if not os.path.exists(path):
        raise TrainerError("No adapters in the checkpoint",
                           f"{checkpoint} has no {ADAPTERS_FILE}. A LoRA fine-tune on one pipeline stage writes it beside its last "
                           "checkpoint; evaluate a fine-tune of several stages through its merged output (merge = true) without base.")
    with safe_open(path, framework="pt", device="cpu") as f:
        meta = f.metadata() or {}
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    try:
        lora = config.LoRAConfig(rank=int(meta["rank"]), alpha=float(meta["alpha"]), targets=meta["targets"].split(","), dropout=0.0)
    except (KeyError, ValueError) as e:
        raise TrainerError("Adapters without settings", f"{path} does not record the adapters' rank, alpha and targets ({e}).") from e
    return lora, tensors


@torch.no_grad()
def load_adapters(m, tensors, where):
    wanted = {k: p for k, p in m.named_parameters() if is_adapter(k)}
    missing = sorted(set(wanted) - set(tensors))
    if missing:
        raise TrainerError("Adapters do not fit the model", f"{where} lacks {missing[0]} (and {len(missing) - 1} more).")
    for k, p in wanted.items():
        if tuple(tensors[k].shape) != tuple(p.shape):
            raise TrainerError("Adapters do not fit the model", f"{k} in {where} is {list(tensors[k].shape)}, the model's {list(p.shape)}.")
        p.copy_(tensors[k])


def gather(mine, world):
    """Every rank's {index: result} merged, on every rank."""
    every = [None] * world
    dist.all_gather_object(every, mine)
    out = {}
    for d in every:
        out.update(d)
    return out


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path, rows):
    """Writes whole, then renames, so a reader never sees half a file."""
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    path = ap.parse_args().config
    rep = Reporter(int(os.environ.get("RANK", "0")) == 0)
    code = 0
    try:
        Evaluator(config.load(path, config.EvalConfig), rep).run()
    except config.ConfigError as e:
        rep.emit("error", summary="Evaluator config unreadable", detail=f"{e}.")
        code = 1
    except TrainerError as e:
        rep.emit("error", summary=e.summary, detail=e.detail)
        code = 1
    except Exception as e:  # anything else: the traceback goes to stderr, the gist to gpuflow
        traceback.print_exc()
        rep.emit("error", summary="Evaluation failed", detail=f"{type(e).__name__}: {e}")
        code = 1
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    sys.exit(code)


if __name__ == "__main__":
    main()
