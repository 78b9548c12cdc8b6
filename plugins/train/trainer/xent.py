"""Cross entropy over the vocabulary on a GPU, in two Triton kernels.

The logits of a large vocabulary are the largest tensor a step makes (at
128,256 columns and 32,768 tokens, 8.4 GB in bf16), and the loss is bound
by reading them. The compiled F.cross_entropy reads them twice in its
forward (once for the maximum, once for the sum of exponentials) and
once more in its backward. Here the forward reads each row once, keeping
a running maximum and a sum rescaled to it (the online log-sum-exp), and
saves one float per row; the backward reads the row again and writes the
gradient, softmax minus the label's one-hot, times the loss's gradient.
Labels of -100 (data.IGNORE) add nothing and get no gradient, as with
F.cross_entropy's ignore_index. On CPU ranks, or logits split over the
vocabulary (tensor parallelism), the trainer uses F.cross_entropy.
"""

import torch
import triton
import triton.language as tl

from data import IGNORE

# Columns read per loop iteration and warps per row: on an H200, 4,096
# columns and 8 warps read bf16 logits at 3.6 TB/s in the forward.
BLOCK = 4096
WARPS = 8


@triton.jit
def _forward(logits, labels, lse_out, loss_out, stride, vocab, IGNORE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = logits + row * stride
    # A finite start: with -inf, a first block of -inf would give
    # exp(-inf - -inf), NaN.
    top = -1e30
    total = 0.0
    for start in range(0, vocab, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < vocab, other=float("-inf")).to(tl.float32)
        new_top = tl.maximum(top, tl.max(x, 0))
        total = total * tl.exp(top - new_top) + tl.sum(tl.exp(x - new_top), 0)
        top = new_top
    lse = top + tl.log(total)
    tl.store(lse_out + row, lse)
    label = tl.load(labels + row)
    kept = label != IGNORE
    picked = tl.load(x_row + tl.where(kept, label, 0)).to(tl.float32)
    tl.store(loss_out + row, tl.where(kept, lse - picked, 0.0))


@triton.jit
def _backward(logits, labels, lse_in, grad_in, grad_out, stride, vocab, IGNORE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = logits + row * stride
    g_row = grad_out + row * stride
    label = tl.load(labels + row)
    scale = tl.where(label != IGNORE, tl.load(grad_in).to(tl.float32), 0.0)
    lse = tl.load(lse_in + row)
    for start in range(0, vocab, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < vocab
        x = tl.load(x_row + cols, mask=inside, other=0.0).to(tl.float32)
        g = (tl.exp(x - lse) - (cols == label).to(tl.float32)) * scale
        tl.store(g_row + cols, g.to(grad_out.dtype.element_ty), mask=inside)


class _SummedCrossEntropy(torch.autograd.Function):
    """The token losses of (rows, vocab) logits summed, as one float32."""

    @staticmethod
    def forward(ctx, logits, labels):
        rows, vocab = logits.shape
        lse = torch.empty(rows, device=logits.device, dtype=torch.float32)
        losses = torch.empty(rows, device=logits.device, dtype=torch.float32)
        _forward[(rows,)](logits, labels, lse, losses, logits.stride(0), vocab, IGNORE=IGNORE, BLOCK=_block(vocab), num_warps=WARPS)
        ctx.save_for_backward(logits, labels, lse)
        return losses.sum()

    @staticmethod
    def backward(ctx, grad):
        logits, labels, lse = ctx.saved_tensors
        rows, vocab = logits.shape
        out = torch.empty_like(logits)
        _backward[(rows,)](logits, labels, lse, grad.contiguous(), out, logits.stride(0), vocab, IGNORE=IGNORE, BLOCK=_block(vocab), num_warps=WARPS)
        return out, None


def _block(vocab):
    return min(BLOCK, triton.next_power_of_2(vocab))


def _rows(logits, labels):
    """(rows, vocab) logits whose columns are adjacent, and their labels."""
    flat = logits.flatten(0, -2)
    if flat.stride(-1) != 1:
        flat = flat.contiguous()
    return flat, labels.flatten().contiguous()


def summed_cross_entropy(logits, labels):
    """The token losses summed, labels of -100 left out: what
    F.cross_entropy(..., ignore_index=-100, reduction="sum") gives."""
    return _SummedCrossEntropy.apply(*_rows(logits, labels))


def cross_entropy(logits, labels):
    """The mean over the tokens whose label is not -100: what
    F.cross_entropy gives (NaN when every label is -100, as there)."""
    flat, labels = _rows(logits, labels)
    return _SummedCrossEntropy.apply(flat, labels) / (labels != IGNORE).sum()
