"""Where an eager PyTorch training step spends its time, kernel class by class.

Profiles plain PyTorch training steps (bf16 autocast over fp32 weights,
fused AdamW, one GPU) with torch.profiler and sums, per step: the matrix
products, attention, the optimizer's kernels, every other kernel (the
element-wise and reduction kernels the estimator counts in bytes), the
number of those other kernels, and the time the GPU sat idle between
kernels. The shapes: Hugging Face's Llama at the Llama-3.2-1B shape (the
reference measurements' runs), the same with gradient checkpointing, the
same block at Llama 3 8B's width (8 layers), and a plain GPT block
(LayerNorm, GELU, fused qkv, SDPA) at hidden 4,096 and 7,168.

    python3 scripts/device/eager_profile.py --out "$OUT/eager_profile.json"
"""

import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

from trace_summary import union  # the time some kernel ran, overlaps counted once


class GPTBlock(nn.Module):
    """A GPT block as plain PyTorch writes it: LayerNorm, GELU, no biases."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.proj = nn.Linear(hidden, hidden, bias=False)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden, bias=False)
        self.fc2 = nn.Linear(4 * hidden, hidden, bias=False)
        self.act = nn.GELU()

    def forward(self, x):
        b, t, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, h))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers, hidden, heads, vocab, seq):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(GPTBlock(hidden, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)

    def forward(self, ids, labels):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            x = blk(x)
        logits = F.linear(self.ln(x), self.wte.weight)
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))


def llama(layers, hidden, ffn, heads, kv, vocab, checkpointing):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, intermediate_size=ffn,
                      num_attention_heads=heads, num_key_value_heads=kv, vocab_size=vocab,
                      tie_word_embeddings=True, max_position_embeddings=8192, attn_implementation="sdpa")
    m = LlamaForCausalLM(cfg)
    if checkpointing:
        m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return m


def classify(name):
    """The kernel's class by its name: attention (SDPA's flash, memory-
    efficient or cuDNN kernels), products (cuBLAS and CUTLASS GEMMs), the
    optimizer's multi-tensor kernels, and everything else, memory copies
    and sets included (their count is part of the other kernels' count).
    Check the costliest other kernels after a run for products that fell
    through (split-K reductions)."""
    n = name.lower()
    if "flash" in n or "fmha" in n or "cudnn" in n or "attention" in n:
        return "attention"
    if any(s in n for s in ("gemm", "nvjet", "cutlass", "xmma", "cublas", "sm90_", "sm80_", "ampere_")):
        return "products"
    if "multi_tensor" in n or "adam" in n:
        return "optimizer"
    return "other"


def profile(name, model, seq, micro, vocab, steps=3):
    dev = torch.device("cuda")
    model = model.to(dev)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    ids = torch.randint(0, vocab, (micro, seq), device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(ids, ids) if isinstance(model, GPT) else model(input_ids=ids, labels=ids)
            loss = out if torch.is_tensor(out) else out.loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        step()
    end.record()
    torch.cuda.synchronize()
    wall = start.elapsed_time(end) / steps
    from torch.profiler import ProfilerActivity, profile as prof

    with prof(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    sums = {"products": 0.0, "attention": 0.0, "optimizer": 0.0, "other": 0.0}
    counts = {k: 0 for k in sums}
    per_kernel = {}
    spans = []
    for ev in p.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        dur = ev.device_time_total / 1e3 if hasattr(ev, "device_time_total") else ev.cuda_time_total / 1e3
        if dur <= 0:
            continue
        c = classify(ev.name)
        sums[c] += dur
        counts[c] += 1
        per_kernel.setdefault(ev.name[:90], [0.0, 0])
        per_kernel[ev.name[:90]][0] += dur
        per_kernel[ev.name[:90]][1] += 1
        t0 = ev.time_range.start / 1e3
        spans.append((t0, t0 + dur))
    spans.sort()
    busy = union(spans)
    profiled = (max(e for _, e in spans) - spans[0][0]) / steps if spans else 0.0
    top = sorted(((v[0] / steps, v[1] // steps, k) for k, v in per_kernel.items() if classify(k) == "other"), reverse=True)[:12]
    row = {"name": name, "seq": seq, "micro": micro, "wall_ms": wall, "profiled_ms": profiled,
           "busy_ms": busy / steps, "idle_ms": profiled - busy / steps,
           **{k + "_ms": v / steps for k, v in sums.items()},
           **{k + "_kernels": counts[k] // steps for k in counts},
           "top_other": [{"ms": t, "calls": c, "kernel": k} for t, c, k in top],
           "peak_allocated_gib": torch.cuda.max_memory_allocated() / 2**30}
    del model, opt
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    cases = [
        ("llama-1b s4096 x1", lambda: llama(16, 2048, 8192, 32, 8, 128256, False), 4096, 1, 128256),
        ("llama-1b s4096 x2", lambda: llama(16, 2048, 8192, 32, 8, 128256, False), 4096, 2, 128256),
        ("llama-1b s4096 x1 full recompute", lambda: llama(16, 2048, 8192, 32, 8, 128256, True), 4096, 1, 128256),
        ("llama-8b-width 8 layers s4096 x1", lambda: llama(8, 4096, 14336, 32, 8, 128256, False), 4096, 1, 128256),
        ("gpt h4096 8 layers s2048 x4", lambda: GPT(8, 4096, 32, 50368, 2048), 2048, 4, 50368),
        ("gpt h7168 4 layers s2048 x4", lambda: GPT(4, 7168, 56, 50368, 2048), 2048, 4, 50368),
    ]
    for name, build, seq, micro, vocab in cases:
        torch.manual_seed(0)
        try:
            rows.append(profile(name, build(), seq, micro, vocab))
        except Exception as e:  # keep the other cases' figures
            rows.append({"name": name, "error": repr(e)[:400]})
            torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
    print(f"{'case':36} {'wall':>7} {'busy':>7} {'idle':>6} {'gemm':>7} {'attn':>6} {'opt':>6} {'other':>7} {'#other':>6}")
    for r in rows:
        if "error" in r:
            print(r["name"], r["error"])
            continue
        print(f"{r['name']:36} {r['wall_ms']:7.1f} {r['busy_ms']:7.1f} {r['idle_ms']:6.1f} {r['products_ms']:7.1f} "
              f"{r['attention_ms']:6.1f} {r['optimizer_ms']:6.1f} {r['other_ms']:7.1f} {r['other_kernels']:6d}")


if __name__ == "__main__":
    main()
