"""The one-GPU speed levers timed in isolation, at the shapes of the
Llama-3.2-1B and Llama 3 8B-wide runs: attention by SDPA backend, with k
and v expanded or read in groups (enable_gqa); a linear layer's forward and
backward in bf16 and through the trainer's fp8 products, eager and
compiled, beside the bare fp8 product with one scale per tensor or per row;
and the output head with its loss. Prints one line per case.

  python3 levers.py TRAINER_DIR   (scripts/device/speed.sh runs it as "py levers.py")
"""
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, sys.argv[1])
import fp8  # noqa: E402  (the trainer's, from TRAINER_DIR)

DEV = "cuda"


def bench(name, fn, n=10, flops=0.0):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t) / n
    rate = f" {flops / dt / 1e12:7.1f} TFLOP/s" if flops else ""
    print(f"{name:60s} {dt * 1e3:8.2f} ms{rate}", flush=True)
    return dt


def attention(b, h, kv, d, s=4096):
    """Causal attention forward and backward; FLOPs are the causal half of
    the square, the backward counted as 2.5 forwards."""
    q = torch.randn(b, h, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, kv, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, kv, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    g = h // kv
    flops = 4 * b * h * s * s * d / 2 * 3.5

    def expanded():
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1), is_causal=True)
        o.sum().backward()

    def grouped():
        F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True).sum().backward()

    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):
        for how, fn in (("repeat", expanded), ("gqa", grouped)):
            name = f"attn b{b} h{h} kv{kv} d{d} {backend.name} {how}"
            try:
                with sdpa_kernel([backend]):
                    bench(name, fn, flops=flops)
            except RuntimeError as e:
                print(f"{name}: {str(e)[:80]}")
    bench(f"attn b{b} h{h} kv{kv} d{d} default repeat", expanded, flops=flops)


def linear(m, k, n):
    x = torch.randn(m, k, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(n, k, device=DEV, dtype=torch.bfloat16) * 0.02).requires_grad_()
    flops = 6 * m * k * n
    compiled = torch.compile(lambda x, w: fp8._FP8Linear.apply(x, w))
    bench(f"linear {m}x{k}x{n} bf16", lambda: F.linear(x, w).sum().backward(), flops=flops)
    bench(f"linear {m}x{k}x{n} fp8 eager", lambda: fp8._FP8Linear.apply(x, w).sum().backward(), flops=flops)
    bench(f"linear {m}x{k}x{n} fp8 compiled", lambda: compiled(x, w).sum().backward(), flops=flops)
    xq, wq = x.detach().to(torch.float8_e4m3fn), w.detach().to(torch.float8_e4m3fn)
    one = torch.ones((), device=DEV)
    rows, cols = torch.ones(m, 1, device=DEV), torch.ones(1, n, device=DEV)
    bench(f"gemm {m}x{k}x{n} _scaled_mm tensorwise only",
          lambda: torch._scaled_mm(xq, wq.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), flops=2 * m * k * n)
    bench(f"gemm {m}x{k}x{n} _scaled_mm rowwise only",
          lambda: torch._scaled_mm(xq, wq.t(), scale_a=rows, scale_b=cols, out_dtype=torch.bfloat16), flops=2 * m * k * n)
    bench(f"gemm {m}x{k}x{n} bf16 only", lambda: x.detach() @ w.detach().t(), flops=2 * m * k * n)


def head(m, k, vocab):
    x = torch.randn(m, k, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(vocab, k, device=DEV, dtype=torch.bfloat16) * 0.02).requires_grad_()
    y = torch.randint(0, vocab, (m,), device=DEV)
    loss = torch.compile(lambda logits, y: F.cross_entropy(logits.float(), y))
    both = torch.compile(lambda x, w, y: F.cross_entropy(F.linear(x, w).float(), y))
    bench(f"head+ce {m}x{k}x{vocab} bf16 linear, compiled fp32 ce", lambda: loss(F.linear(x, w), y).backward())
    bench(f"head+ce {m}x{k}x{vocab} compiled together", lambda: both(x, w, y).backward())


def main():
    torch.manual_seed(0)
    attention(4, 32, 8, 64)
    attention(2, 32, 8, 128)
    for shape in ((8192, 4096, 14336), (8192, 14336, 4096), (8192, 4096, 4096), (16384, 2048, 8192)):
        linear(*shape)
    head(16384, 2048, 128256)
    head(8192, 4096, 128256)


if __name__ == "__main__":
    main()
