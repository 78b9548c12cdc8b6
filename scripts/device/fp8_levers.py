"""Where fp8's time goes in one transformer block's linear layers, at the
Llama 3 8B width (hidden 4096, ffn 14336, 8 key-value heads of 128),
8192 tokens: the block's seven products with its norms and SwiGLU,
forward and backward, compiled, in bf16 and through variants of the
trainer's fp8 products. Attention is left out (it runs in bf16 either way).

  python3 fp8_levers.py TRAINER_DIR   (speed.sh: "py fp8_levers.py"; levers.py beside it)

Variants: "trainer" is fp8.py as it is; "shared input" casts the input
of q, k and v once and that of gate and up once; "fast accumulation"
takes the forward product in the tensor cores' fast mode.
"""
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, sys.argv[1])
import fp8  # noqa: E402  (the trainer's, from TRAINER_DIR)
from levers import bench  # noqa: E402  (levers.py, beside this script)

DEV = "cuda"
T, H, FFN, KV = 8192, 4096, 14336, 1024
SHAPES = {"q": (H, H), "k": (KV, H), "v": (KV, H), "o": (H, H), "gate": (FFN, H), "up": (FFN, H), "down": (H, FFN)}
FLOPS = 3 * 2 * T * sum(a * b for a, b in SHAPES.values())


class SharedInput(torch.autograd.Function):
    """x times several weights in fp8, x cast once; the backward casts the
    output gradients each once and sums the inputs' gradients."""

    @staticmethod
    def forward(ctx, x, *weights):
        x2 = x.reshape(-1, x.shape[-1])
        xq, xs = fp8._quantize(x2, fp8.E4M3)
        outs, saved = [], [xq, xs]
        for w in weights:
            wq, ws = fp8._quantize(w, fp8.E4M3)
            outs.append(torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=x.dtype).reshape(*x.shape[:-1], w.shape[0]))
            saved += [wq, ws]
        ctx.save_for_backward(*saved)
        ctx.x_shape = x.shape
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        xq, xs, *ws = ctx.saved_tensors
        gx, gws = None, []
        xt = fp8._col_major(xq)
        for g, wq, wsc in zip(grads, ws[0::2], ws[1::2]):
            g2 = g.reshape(-1, g.shape[-1])
            gq, gs = fp8._quantize(g2, fp8.E5M2)
            d = torch._scaled_mm(gq, fp8._col_major(wq), scale_a=gs, scale_b=wsc, out_dtype=g.dtype)
            gx = d if gx is None else gx + d
            gws.append(torch._scaled_mm(gq.t().contiguous(), xt, scale_a=gs, scale_b=xs, out_dtype=g.dtype))
        return (gx.reshape(ctx.x_shape), *gws)


class Fast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        x2 = x.reshape(-1, x.shape[-1])
        xq, xs = fp8._quantize(x2, fp8.E4M3)
        wq, ws = fp8._quantize(w, fp8.E4M3)
        out = torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=x.dtype, use_fast_accum=True)
        ctx.save_for_backward(xq, xs, wq, ws)
        ctx.x_shape = x.shape
        return out.reshape(*x.shape[:-1], w.shape[0])

    backward = fp8._FP8Linear.backward


def block(lin, pair, triple):
    def f(x, w):
        h = F.rms_norm(x, (H,))
        q, k, v = triple(h, w["q"], w["k"], w["v"])
        x1 = x + lin(q * torch.sigmoid(q), w["o"]) + (k.sum(-1, keepdim=True) + v.sum(-1, keepdim=True))
        h2 = F.rms_norm(x1, (H,))
        g, u = pair(h2, w["gate"], w["up"])
        return x1 + lin(F.silu(g) * u, w["down"])
    return f


def main():
    torch.manual_seed(0)
    ws = {n: (torch.randn(s, device=DEV, dtype=torch.bfloat16) * s[1] ** -0.5).requires_grad_() for n, s in SHAPES.items()}
    x = torch.randn(T, H, device=DEV, dtype=torch.bfloat16, requires_grad=True)

    def each(fn):
        return lambda x, *w: tuple(fn(x, wi) for wi in w)

    fp8_lin = fp8._FP8Linear.apply
    variants = {
        "bf16": block(F.linear, each(F.linear), each(F.linear)),
        "fp8 trainer": block(fp8_lin, each(fp8_lin), each(fp8_lin)),
        "fp8 fast accumulation forward": block(Fast.apply, each(Fast.apply), each(Fast.apply)),
        "fp8 shared input": block(fp8_lin, SharedInput.apply, SharedInput.apply),
    }
    times = {}
    for name, f in variants.items():
        c = torch.compile(f)

        def step():
            c(x, ws).sum().backward()
        try:
            times[name] = bench(name, step, flops=FLOPS)
        except Exception as e:  # a variant that fails to compile is reported, not fatal
            print(f"{name}: {type(e).__name__}: {str(e)[:120]}")
    if "bf16" in times:
        for name, t in times.items():
            print(f"  {name:42s} {times['bf16'] / t:5.2f}x bf16")


if __name__ == "__main__":
    main()
