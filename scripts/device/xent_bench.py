"""The trainer's cross entropy (xent.py) against F.cross_entropy, eager and
compiled, on one GPU: the forward and backward time of the loss over
bf16 logits of ROWS tokens and VOCAB columns (by default a micro-batch of
8 x 4096 tokens of the Llama 3 vocabulary), the bandwidth each reaches
(the forward reads the logits once at best, the backward reads them and
writes their gradient), and each one's loss and largest gradient
difference from eager F.cross_entropy in fp32.

  python3 scripts/device/xent_bench.py plugins/train/trainer [--rows 32768 --vocab 128256]
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F

REPS = 10


def reference(logits, labels):
    return F.cross_entropy(logits.float(), labels)


def timed(fn, logits, labels):
    """Mean forward and backward milliseconds over REPS after 3 warm-ups,
    the last loss and gradient."""
    x = logits.clone().requires_grad_(True)
    for _ in range(3):
        fn(x, labels).backward()
        x.grad = None
    torch.cuda.synchronize()
    fwd = bwd = 0.0
    for _ in range(REPS):
        a, b, c = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        a.record()
        loss = fn(x, labels)
        b.record()
        loss.backward()
        c.record()
        torch.cuda.synchronize()
        fwd, bwd = fwd + a.elapsed_time(b), bwd + b.elapsed_time(c)
        grad, x.grad = x.grad, None
    return fwd / REPS, bwd / REPS, loss.item(), grad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trainer")
    ap.add_argument("--rows", type=int, default=32768)
    ap.add_argument("--vocab", type=int, default=128256)
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.trainer))
    import xent

    g = torch.Generator(device="cuda").manual_seed(0)
    logits = (torch.randn(a.rows, a.vocab, device="cuda", generator=g) * 3).to(torch.bfloat16)
    labels = torch.randint(0, a.vocab, (a.rows,), device="cuda", generator=g)
    labels[::7] = -100
    gb = logits.numel() * logits.element_size() / 1e9
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}: {a.rows} x {a.vocab} bf16 logits, {gb:.2f} GB\n")
    print("| loss | forward ms | forward TB/s (one read) | backward ms | backward TB/s (a read and a write) | loss | largest gradient difference from eager |")
    print("|---|---|---|---|---|---|---|")
    ref = None
    for name, fn in [("F.cross_entropy, eager", reference), ("F.cross_entropy, torch.compile", torch.compile(reference)),
                     ("xent.cross_entropy (two Triton kernels)", xent.cross_entropy)]:
        fwd, bwd, loss, grad = timed(fn, logits, labels)
        if ref is None:
            ref = grad.float()
        diff = (grad.float() - ref).abs().max().item()
        print(f"| {name} | {fwd:.2f} | {gb / fwd:.2f} | {bwd:.2f} | {2 * gb / bwd:.2f} | {loss:.6f} | {diff:.2e} |")
        del grad


if __name__ == "__main__":
    main()
