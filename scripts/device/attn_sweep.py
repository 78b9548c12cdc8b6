"""Causal attention's forward and backward through the trainer's call
(F.scaled_dot_product_attention with grouped keys and values on
(batch, heads, seq, head) views of (batch, seq, heads, head) tensors, as
the trainer's attention makes them; PyTorch's backend choice), bf16, over
head sizes and sequence lengths at 32,768 tokens a call: the rate the
plan's attention time is drawn from. Each shape's kernels are named from
one profiled call, so the backend that ran is on record. Prints one line
per shape and, with --json, writes them with the GPU and PyTorch version
(engine/estimate/testdata/attention-h200.json is that file).

  python3 attn_sweep.py [--json FILE]

Rates are given in two conventions: the causal half of the score square
(what the kernels execute) and the whole square, 12 x hidden x seq FLOPs
per token and layer (the convention MFU and the plan count in).
"""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

TOKENS = 32768


def timed(fn, n):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) for s, e in zip(start, end))[n // 2] / 1e3


def named(fn):
    """The GPU kernels one call of fn launches, by name, longest first."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    spent = {}
    for e in prof.key_averages():
        if e.self_device_time_total > 0:
            spent[e.key] = spent.get(e.key, 0) + e.self_device_time_total
    return [name for name, _ in sorted(spent.items(), key=lambda kv: -kv[1])[:3]]


def case(d, s, heads, kv):
    b = max(1, TOKENS // s)

    def projected(h):
        # The trainer's projections are (batch, seq, heads, head); it hands
        # attention their transposed views.
        return torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    q, k, v = projected(heads), projected(kv), projected(kv)
    g = torch.randn(b, heads, s, d, device="cuda", dtype=torch.bfloat16)

    def fwd():
        return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
                                              enable_gqa=heads != kv)

    def both():
        fwd().backward(g)

    tf = timed(fwd, 10)  # with gradients on, as in training: the forward keeps what its backward needs
    tb = timed(both, 10)
    square = 12 * heads * d * s * b * s  # 12 h s per token, h = heads x d, over b x s tokens
    return {"head_dim": d, "seq": s, "batch": b, "heads": heads, "kv_heads": kv, "forward_s": tf, "step_s": tb,
            "square_tflops": square / tb / 1e12, "causal_tflops": square / 2 / tb / 1e12, "kernels": named(both)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"{'d':>4} {'seq':>6} {'b':>3} {'heads':>5} {'fwd ms':>8} {'f+b ms':>8} {'square TF/s':>11} {'causal TF/s':>11}")
    for d, heads, kv in ((64, 32, 8), (128, 32, 8), (96, 32, 8), (64, 12, 12), (128, 64, 8)):
        for s in (1024, 2048, 4096, 8192, 16384):
            try:
                r = case(d, s, heads, kv)
            except RuntimeError as e:
                print(f"{d:4d} {s:6d}: {str(e)[:100]}")
                continue
            rows.append(r)
            print(f"{d:4d} {s:6d} {r['batch']:3d} {heads:5d} {r['forward_s']*1e3:8.2f} {r['step_s']*1e3:8.2f} "
                  f"{r['square_tflops']:11.1f} {r['causal_tflops']:11.1f}  {(r['kernels'] or ['?'])[0][:60]}", flush=True)
            torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
