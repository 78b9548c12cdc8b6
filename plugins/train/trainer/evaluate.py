"""gpuflow's evaluator for eval stages, one process per GPU (or CPU rank)
under torchrun:

  python3 -m torch.distributed.run --standalone --nproc-per-node=N evaluate.py --config config.json

config.json is written by plugins/train (eval.go: evalConfig). The ranks
split the work (samples, questions, prompts) round robin and sum or gather
the results; rank 0 reports on stdout as the trainer does (report.py),
with one "eval" event carrying the measures, and writes the answer files.

Each rank holds the whole model, unless the layout shards the weights
(fsdp = true, or zero = 3) over several ranks: each rank then holds 1/N
of them, through FSDP2 (fully_shard per block and over the whole), which
gathers a block's weights for its forward and frees them after. Every
rank must then enter every gather as often as the others: each loop runs
as many forwards on every rank as on the busiest (a rank with nothing
left runs a one-token forward and drops it), and generation steps every
rank until the prompts of every rank are done.

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
            Prompts run micro_batch at a time (consecutive ones, the
            batches dealt round robin), left-padded to the longest of
            them, each at its own positions.
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
import parallel
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
        l = self.cfg.layout
        self.sharded = (l.fsdp or l.zero >= 3) and self.world > 1

    def _load(self):
        """The model: the weights (with a LoRA checkpoint's adapters over
        its base), in bf16 on a GPU, fp32 on CPU; whole on this rank, or
        its 1/N share when the layout shards it."""
        if self.sharded:
            return self._load_sharded()
        with torch.device(self.device):
            m = M.Transformer(self.args)
        lora = self._adapt(m)
        self._read(m, lora)
        if not self.cpu:
            m.to(torch.bfloat16)
        return self._ready(m, "whole on each")

    def _load_sharded(self):
        """The model made on the meta device in its compute dtype, sharded
        over the ranks, then each rank's share of every weight read into
        place (hf.load and DCP read shards), so no rank ever holds it whole."""
        from torch.distributed.device_mesh import init_device_mesh
        with torch.device("meta"):
            m = M.Transformer(self.args)
        lora = self._adapt(m)
        dtype = torch.float32 if self.cpu else torch.bfloat16
        m.to(dtype)
        # As training shards at fsdp = true: each block's weights gathered
        # for its forward and freed after it.
        parallel.apply_fsdp(m, init_device_mesh(self.device.type, (self.world,)), True, compute_dtype=dtype)
        m.to_empty(device=self.device)
        self._read(m, lora)
        return self._ready(m, "sharded by FSDP2 over")

    def _adapt(self, m):
        """Adds a LoRA checkpoint's adapters to m (none without a base):
        read_adapters' settings and tensors, for _read."""
        if not self.cfg.base:
            return None
        lora, adapters = read_adapters(self.cfg.weights)
        add_adapters(m, lora)
        return lora, adapters

    def _read(self, m, lora):
        """Reads the weights into m: with lora (_adapt's), the base's and
        the adapters over them."""
        cfg = self.cfg
        if lora is None:
            self._weights(m, cfg.weights, cfg.weights_format, lambda k: True)
            return
        spec, adapters = lora
        self._weights(m, cfg.base, cfg.base_format, lambda k: not is_adapter(k))
        load_adapters(m, adapters, cfg.weights)
        self.rep.log(f"LoRA adapters (rank {spec.rank}, targets {', '.join(spec.targets)}) from {cfg.weights} over {cfg.base}")

    def _ready(self, m, held):
        m.init_buffers(self.device)  # the rotary table stays fp32
        m.eval()
        params = sum(p.numel() for k, p in m.named_parameters() if not is_adapter(k))
        self.rep.log(f"model: {params / 1e6:.1f}M parameters, "
                     f"{'fp32 on CPU' if self.cpu else 'bf16'}, {held} of {self.world} rank(s)")
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
        batch = max(1, self.cfg.layout.micro_batch)
        mine = list(range(self.rank, n, self.world))
        batches = [mine[i:i + batch] for i in range(0, len(mine), batch)]
        sums = torch.zeros(2, dtype=torch.float64, device=self.device)
        for rows in self._lockstep(batches):
            if rows is None:
                continue
            tokens = torch.from_numpy(np.stack([shards.sample(j) for j in rows])).to(self.device)
            self._check_vocab(tokens)
            logits = forward(self.model, tokens[:, :-1])
            sums[0] += F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten(), reduction="sum").double()
            sums[1] += tokens[:, 1:].numel()
        dist.all_reduce(sums)
        loss = float(sums[0] / sums[1])
        self.rep.log(f"loss {loss:.4f} over {int(sums[1])} tokens ({n} samples of {seq + 1})")
        return {"valid_loss": loss, "valid_perplexity": math.exp(min(loss, 700.0)), "valid_tokens": int(sums[1])}

    def _check_vocab(self, tokens):
        self._check_top(int(tokens.max()))

    def _check_vocab_lists(self, lists):
        """Checks questions or prompts whole, on every rank, before any
        forward: a rank that stopped at its own would leave the others
        waiting in a sharded model's gathers."""
        self._check_top(max((max(ids) for ids in lists if ids), default=0))

    def _check_top(self, top):
        if top >= self.args.vocab:
            raise TrainerError("Token beyond the vocabulary", f"The input holds token id {top}, but the model's vocab is {self.args.vocab}; "
                               "evaluate with the tokenizer the model was trained with.")

    def _lockstep(self, mine, idle=None):
        """This rank's items; when the model is sharded, padded with None
        to the busiest rank's count, each None after idle() (a one-token
        forward whose result is dropped, unless given), so that every
        rank enters FSDP2's gathers as often as the others."""
        most = self._most(len(mine))  # before this rank's first forward, as on every rank
        yield from mine
        for _ in range(most - len(mine)):
            (idle or self._idle_forward)()
            yield None

    def _most(self, count):
        """The largest of the ranks' counts when the model is sharded (one
        number all-reduced), else this rank's own."""
        if not self.sharded:
            return count
        t = torch.tensor([count], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return int(t.item())

    def _idle_forward(self):
        """A forward for its gathers alone: one token, result dropped. The
        gathers move weights, whose shapes do not depend on the input."""
        forward(self.model, torch.zeros((1, 1), dtype=torch.long, device=self.device))

    # -- multiple choice ---------------------------------------------------

    @torch.no_grad()
    def choices(self):
        c = self.cfg.choices
        questions = read_jsonl(c.questions)
        self._check_vocab_lists([q["context"] for q in questions] + [cont for q in questions for cont in q["continuations"]])
        scores = {}
        for i in self._lockstep(range(self.rank, len(questions), self.world)):
            if i is not None:
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
        self._check_vocab_lists([p["tokens"] for p in prompts])
        done = {}
        # Batches of consecutive prompts, dealt round robin: a prompt's
        # batch-mates, whose rows share its products (and their rounding),
        # do not depend on the number of ranks.
        size = max(1, self.cfg.layout.micro_batch)
        batches = [list(range(k, min(k + size, len(prompts)))) for k in range(0, len(prompts), size)]
        for rows in self._lockstep(batches[self.rank::self.world], idle=self._idle_generation):
            if rows is None:
                continue
            batch = Batch([Completion(prompts[i]["tokens"], g, self.args, M.param_seed(self.cfg.seed, f"prompt{i}")) for i in rows],
                          self.args, self.device)
            while self._going(batch.going):
                if batch.going:
                    batch.step(self.model)
                else:
                    self._idle_forward()
            done.update((i, (c.out, c.finish)) for i, c in zip(rows, batch.rows))
        every = gather(done, self.world)
        if self.rank == 0:
            write_jsonl(g.completions, [{"tokens": every[i][0], "finish": every[i][1]} for i in range(len(prompts))])
        made = sum(len(every[i][0]) for i in range(len(prompts)))
        self.rep.log(f"generated {made} tokens for {len(prompts)} prompts")
        return {"prompts": len(prompts), "generated_tokens": made}

    def _idle_generation(self):
        """A round of generation with no prompt of this rank's: idle
        forwards while any other rank's batch goes on."""
        while self._going(False):
            self._idle_forward()

    def _going(self, mine):
        """Whether to run another forward: while this rank's completion
        goes on, and when the model is sharded, while any rank's does (one
        flag summed over the ranks per new token)."""
        if not self.sharded:
            return mine
        flag = torch.tensor([int(mine)], device=self.device)
        dist.all_reduce(flag)
        return bool(flag.item())


class Completion:
    """One prompt's new tokens (cut from the left to leave room for
    max_new_tokens), and why they ended: finish is "eos" or "length", ""
    while it goes on."""

    def __init__(self, prompt, g, args, seed):
        self.g, self.seq = g, args.seq_len
        self.tokens = list(prompt[-max(1, args.seq_len - g.max_new_tokens):])
        self.gen = torch.Generator().manual_seed(seed)
        self.out, self.finish = [], ""
        self._check_length()

    def take(self, logits):
        """Picks the next token from its logits (on the CPU)."""
        nxt = pick(logits, self.g.temperature, self.g.top_p, self.gen)
        self.out.append(nxt)
        self.tokens.append(nxt)
        if nxt in self.g.stop:
            self.finish = "eos"
        else:
            self._check_length()

    def _check_length(self):
        if len(self.out) >= self.g.max_new_tokens or len(self.tokens) >= self.seq:
            self.finish = "length"


class Batch:
    """Completions decoded together: their prompts run once, left-padded
    to the longest, then each step feeds every row its latest token
    against the key-value cache (a finished row its last again, its
    result dropped), until every row has finished. Each row sits at
    positions of its own and picks from its own generator, so its tokens
    are those it would make alone."""

    def __init__(self, rows, args, device):
        self.rows, self.device = rows, device
        self.width = max(len(c.tokens) for c in rows)
        pads = [self.width - len(c.tokens) for c in rows]
        pad = torch.tensor(pads, device=device) if any(pads) else None
        self.cache = M.KVCache.for_layers(args.layers, pad)
        self.fed = 0

    @property
    def going(self):
        return any(not c.finish for c in self.rows)

    def step(self, model):
        if self.fed == 0:
            t = [[0] * (self.width - len(c.tokens)) + c.tokens for c in self.rows]
        else:
            t = [c.tokens[-1:] for c in self.rows]
        tokens = torch.tensor(t, device=self.device)
        last = forward(model, tokens, start=self.fed, cache=self.cache)[:, -1].float().cpu()
        self.fed += tokens.shape[1]
        for c, logits in zip(self.rows, last):
            if not c.finish:
                c.take(logits)


def forward(m, tokens, start=0, cache=None):
    """m's logits for tokens at positions start.. (at most seq_len in all):
    the model's rotary table, made for seq_len positions, cut to the
    input's for the call (each row's own, for left-padded rows); GPT-2's
    learned positions, without a table, counted from start by the model.
    With a KVCache, tokens follow those the cache holds, start of them."""
    full = m.rope
    pad = M.cache_pad(cache) if cache is not None else None
    if full is not None and pad is not None:
        m.rope = full[:, M.padded_positions(pad, start, tokens.shape[1], full.shape[1])]
    elif full is not None:
        m.rope = full[:, start:start + tokens.shape[1]]
    try:
        return m(tokens, cache, start)
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
    """Copies each adapter into m, or this rank's shard of it where m is
    sharded."""
    from torch.distributed.tensor import DTensor
    wanted = {k: p for k, p in m.named_parameters() if is_adapter(k)}
    missing = sorted(set(wanted) - set(tensors))
    if missing:
        raise TrainerError("Adapters do not fit the model", f"{where} lacks {missing[0]} (and {len(missing) - 1} more).")
    for k, p in wanted.items():
        if tuple(tensors[k].shape) != tuple(p.shape):
            raise TrainerError("Adapters do not fit the model", f"{k} in {where} is {list(tensors[k].shape)}, the model's {list(p.shape)}.")
        offset, shape = hf.local_box(p)
        mine = tensors[k][tuple(slice(o, o + n) for o, n in zip(offset, shape))]
        (p.to_local() if isinstance(p, DTensor) else p).copy_(mine)


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
