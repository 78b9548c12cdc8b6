"""The parts of scripts/device/qwen2-7b-lora.sh that need Python.

  python3 qwen2_7b_lora.py make DIR CONFIG TOKENIZER_DIR
      a Qwen2-7B-shaped folder with random weights: CONFIG (Qwen2-7B-
      Instruct's config.json) through AutoConfig and from_config on the
      GPU in bf16, saved with save_pretrained in 5 GB shards, and the
      tokenizer files beside it.
  python3 qwen2_7b_lora.py hf DIR TRAINER SHARD_PREFIX --steps N --skip K --json OUT
      the reference exercise's recipe on the same tokens gpuflow trains on:
      transformers Trainer + PEFT LoRA (r 64, alpha 128, dropout 0.05 on
      q/k/v/o), micro-batch 2, accumulation 4, gradient checkpointing, bf16,
      fused AdamW, sequences of 4096 tokens (the shards' packed samples,
      read with gpuflow's own reader from TRAINER, so no token is padding;
      where the shards have loss masks, the masked labels are -100).
      Tokens/s: 8 x 4096 tokens per optimizer step over the wall time
      between the ends of consecutive steps, steps after the first K.
  python3 qwen2_7b_lora.py parts --json OUT
      the matrix products and attention of one micro-batch at the model's
      shapes, each timed alone: the step's floor, to tell what else it spends.
  python3 qwen2_7b_lora.py table WORK
      the plan beside gpuflow's run and the reference recipe's.
"""

import argparse
import json
import os
import shutil
import sys
import time

SEQ = 4096
MICRO, ACCUM = 2, 4


def make(a):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    os.makedirs(a.dir, exist_ok=True)
    shutil.copy(a.config, os.path.join(a.dir, "config.json"))
    cfg = AutoConfig.from_pretrained(a.dir)
    t0 = time.perf_counter()
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    built = time.perf_counter() - t0
    model.save_pretrained(a.dir, max_shard_size="5GB")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(a.tokenizer, name), os.path.join(a.dir, name))
    n = sum(p.numel() for p in model.parameters())
    size = sum(os.path.getsize(os.path.join(a.dir, f)) for f in os.listdir(a.dir))
    print(json.dumps({"params": n, "bytes": size, "build_s": round(built, 1), "save_s": round(time.perf_counter() - t0 - built, 1),
                      "files": sorted(os.listdir(a.dir))}))


class StepClock:
    """Wall time between the ends of consecutive optimizer steps, the GPU
    synchronised at each end, so a step's time holds its data loading,
    forward, backward and optimizer."""

    def __init__(self):
        self.ends = []

    def callback(self):
        import torch
        from transformers import TrainerCallback
        clock = self

        class Cb(TrainerCallback):
            def on_train_begin(self, args, state, control, **kw):
                torch.cuda.synchronize()
                clock.ends.append(time.perf_counter())

            def on_step_end(self, args, state, control, **kw):
                torch.cuda.synchronize()
                clock.ends.append(time.perf_counter())
        return Cb()

    def step_times(self):
        return [b - a for a, b in zip(self.ends, self.ends[1:])]


def hf(a):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
    sys.path.insert(0, a.trainer)
    from data import Batches, TokenShards

    masked = os.path.exists(a.shards + ".mask.bin")
    batches = Batches(TokenShards([a.shards], SEQ, masks=[a.shards + ".mask"] if masked else None), MICRO * ACCUM, 0)
    rows = []
    for s in range(a.steps):
        tokens = batches.local(s, 0, 1)[:, :SEQ]
        labels = tokens.clone()
        if masked:  # transformers shifts the labels itself: label t is token t, trained where its mask is 1
            labels[batches.local_mask(s, 0, 1)[:, :SEQ] == 0] = -100
        rows.extend(zip(tokens, labels))

    class Packed(torch.utils.data.Dataset):
        def __len__(self):
            return len(rows)

        def __getitem__(self, i):
            return {"input_ids": rows[i][0], "labels": rows[i][1], "attention_mask": torch.ones(SEQ, dtype=torch.int64)}

    t0 = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(a.dir, dtype=torch.bfloat16, device_map={"": 0})
    load_s = time.perf_counter() - t0
    lora = LoraConfig(r=64, lora_alpha=128, target_modules=["q_proj", "v_proj", "k_proj", "o_proj"], lora_dropout=0.05, task_type="CAUSAL_LM")
    model = get_peft_model(model, lora)
    model.enable_input_require_grads()
    trained, total = model.get_nb_trainable_parameters()
    args = TrainingArguments(output_dir=os.path.join(os.path.dirname(a.json), "hf-trainer"), per_device_train_batch_size=MICRO,
                             gradient_accumulation_steps=ACCUM, learning_rate=2e-5, warmup_steps=10, max_steps=a.steps, bf16=True,
                             gradient_checkpointing=True, optim="adamw_torch_fused", logging_steps=1, save_strategy="no",
                             report_to="none", dataloader_drop_last=True)
    clock = StepClock()
    torch.cuda.reset_peak_memory_stats()
    trainer = Trainer(model=model, args=args, train_dataset=Packed(), callbacks=[clock.callback()])
    trainer.train()
    times = clock.step_times()
    timed = times[a.skip:]
    tokens = MICRO * ACCUM * SEQ
    moved = max(p.detach().abs().max().item() for n, p in model.named_parameters() if "lora_B" in n)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    out = {"what": "transformers Trainer + PEFT", "params": total, "trained_params": trained, "load_s": round(load_s, 1),
           "steps": a.steps, "skipped": a.skip, "step_s": times, "tokens_per_step": tokens,
           "tokens_per_s": tokens * len(timed) / sum(timed), "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
           "peak_allocated_bytes": torch.cuda.max_memory_allocated(), "losses": losses, "lora_b_max_abs": moved,
           "attn": model.config._attn_implementation, "padding_tokens": 0,
           "trained_label_share": sum(int((l[1:] != -100).sum()) for _, l in rows) / (len(rows) * (SEQ - 1))}
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps({k: v for k, v in out.items() if k != "step_s"}))


def parts(a):
    """Times, at Qwen2-7B's shapes, the matrix products and the attention
    one micro-batch of 4096 tokens runs under LoRA on q/k/v/o (forward and
    input gradients; the frozen weights get no weight gradient), each alone
    in a loop: what a step would take if nothing else ran."""
    import torch
    import torch.nn.functional as F
    dev, bf = "cuda", torch.bfloat16
    h, ffn, heads, kv, hd, vocab, layers, rank = 3584, 18944, 28, 4, 128, 152064, 28, 64
    x = torch.randn(SEQ, h, device=dev, dtype=bf)

    def timed(fn, n=20):
        for _ in range(3):
            fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / n / 1e3

    def product(n_in, n_out):
        """Forward y = x W^T and the input gradient dy W."""
        w = torch.randn(n_out, n_in, device=dev, dtype=bf)
        xi = torch.randn(SEQ, n_in, device=dev, dtype=bf)
        dy = torch.randn(SEQ, n_out, device=dev, dtype=bf)
        return timed(lambda: xi @ w.t()) + timed(lambda: dy @ w)

    def adapter(n_in, n_out):
        """LoRA's four small products forward, and backward both gradients of each."""
        A = torch.randn(rank, n_in, device=dev, dtype=bf)
        B = torch.randn(n_out, rank, device=dev, dtype=bf)
        xi = torch.randn(SEQ, n_in, device=dev, dtype=bf)
        r = torch.randn(SEQ, rank, device=dev, dtype=bf)
        dy = torch.randn(SEQ, n_out, device=dev, dtype=bf)
        fwd = timed(lambda: xi @ A.t()) + timed(lambda: r @ B.t())
        bwd = timed(lambda: dy @ B) + timed(lambda: dy.t() @ r) + timed(lambda: r @ A) + timed(lambda: r.t() @ xi)
        return fwd + bwd

    q = torch.randn(1, heads, SEQ, hd, device=dev, dtype=bf, requires_grad=True)
    k = torch.randn(1, heads, SEQ, hd, device=dev, dtype=bf, requires_grad=True)
    v = torch.randn(1, heads, SEQ, hd, device=dev, dtype=bf, requires_grad=True)
    g = torch.randn(1, heads, SEQ, hd, device=dev, dtype=bf)

    def attention():
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(g)

    per_layer = {"q_proj": product(h, heads * hd), "k_proj": product(h, kv * hd), "v_proj": product(h, kv * hd),
                 "o_proj": product(heads * hd, h), "gate_proj": product(h, ffn), "up_proj": product(h, ffn),
                 "down_proj": product(ffn, h), "attention": timed(attention, 10),
                 "adapters": adapter(h, heads * hd) + 2 * adapter(h, kv * hd) + adapter(heads * hd, h)}
    head = product(h, vocab)
    del x
    total = layers * sum(per_layer.values()) + head
    out = {"per_layer_s": per_layer, "output_layer_s": head, "micro_batch_s": total, "tokens": SEQ}
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out))


def table(a):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from train_summary import estimate, gib, load, outputs, pct
    address = "finetune.function_calling"
    est = estimate(load(os.path.join(a.work, "plan.json")), address)
    out, status, err = outputs(a.work, address)
    ref = load(os.path.join(a.work, "hf.json")) or {}
    ptps, pmem = est.get("tokens_per_s"), (est.get("memory_bytes") or {}).get("total")
    tps, mem, alloc = out.get("tokens_per_s"), out.get("peak_memory_bytes"), out.get("peak_allocated_bytes")
    rtps = ref.get("tokens_per_s")
    lines = ["| run | tokens/s | peak GiB (allocated) | against the reference recipe |", "|---|---|---|---|",
             f"| reference recipe: transformers Trainer + PEFT | {rtps or 0:,.0f} | {gib(ref.get('peak_reserved_bytes'), 2)} "
             f"({gib(ref.get('peak_allocated_bytes'), 2)}) | 1.00x |",
             f"| gpuflow apply ({status}{': ' + err[:200] if err else ''}) | {tps or 0:,.0f} | {gib(mem, 2)} ({gib(alloc, 2)}) | "
             f"{(tps or 0) / rtps if rtps else 0:.2f}x |",
             f"| gpuflow plan, before the run | {ptps or 0:,.0f} ({pct(ptps, tps)}) | {gib(pmem, 2)} ({pct(pmem, mem)}) | |"]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(a.work, "table.md"), "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("config")
    m.add_argument("tokenizer")
    h = sub.add_parser("hf")
    h.add_argument("dir")
    h.add_argument("trainer")
    h.add_argument("shards")
    h.add_argument("--steps", type=int, default=8)
    h.add_argument("--skip", type=int, default=3)
    h.add_argument("--json", required=True)
    p = sub.add_parser("parts")
    p.add_argument("--json", required=True)
    t = sub.add_parser("table")
    t.add_argument("work")
    a = ap.parse_args()
    {"make": make, "hf": hf, "parts": parts, "table": table}[a.cmd](a)


if __name__ == "__main__":
    main()
