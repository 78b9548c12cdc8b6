"""The baseline gpuflow's trainer must beat on one GPU: Hugging Face's
LlamaForCausalLM in the Llama-3.2-1B shape, built from its config (no
download), eager or with torch.compile (--compile: the whole model
compiled, as transformers' Trainer does with torch_compile=True), bf16
autocast over fp32 weights, fused AdamW, SDPA attention, as the reference
measurements ran it. Prints one JSON line.

  python3 train_hf_baseline.py --micro-batch 4 --seq 4096 --steps 13 [--compile]
"""

import argparse
import json
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

PEAK_BF16 = 989e12  # H100/H200 SXM dense bf16, the datasheet figure the reference measurements divide by


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--micro-batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=13)
    ap.add_argument("--skip", type=int, default=3)
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    cfg = LlamaConfig(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                      num_key_value_heads=8, max_position_embeddings=a.seq, tie_word_embeddings=True, rope_theta=500000.0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg)
    n = sum(p.numel() for p in model.parameters())
    forward = torch.compile(model) if a.compile else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    g = torch.Generator(device="cuda").manual_seed(0)
    times = []
    for _ in range(a.steps):
        x = torch.randint(0, cfg.vocab_size, (a.micro_batch, a.seq), device="cuda", generator=g)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = forward(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    timed = times[a.skip:]
    tps = a.micro_batch * a.seq * len(timed) / sum(timed)
    flops = 6 * n + 12 * 16 * 2048 * a.seq
    print(json.dumps({"what": "hf-compile" if a.compile else "hf-eager", "params": n, "tokens_per_s": tps, "mfu": tps * flops / PEAK_BF16,
                      "step_s": sum(timed) / len(timed), "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
                      "attn": getattr(model.config, "_attn_implementation", "?"), "loss": loss.item()}))


if __name__ == "__main__":
    main()
