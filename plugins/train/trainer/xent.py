"""Cross entropy over the vocabulary on a GPU, in two Triton kernels.

The logits of a large vocabulary are the largest tensor a step makes (at
128,256 columns and 32,768 tokens, 8.4 GB in bf16), and the loss is bound
by reading them. The compiled F.cross_entropy's forward takes the time
of two passes over them (on an H200, 1.5 TB/s of a single read;
docs/benchmarks.md, "The loss in one read"), its backward one more.
Here the forward reads each row once, keeping a running maximum and a
sum rescaled to it (the online log-sum-exp), and saves one float per
row; the backward reads the row again and writes the
gradient, softmax minus the label's one-hot, times the loss's gradient.
Labels of -100 (data.IGNORE) add nothing and get no gradient, as with
F.cross_entropy's ignore_index.

Under tensor parallelism each rank holds its share of the vocabulary's
columns (vocab_parallel): the kernels run on the share, and three
all-reduces of one float per row (the maximum, the rescaled sums, the
label's logit from the rank that holds it) make every rank's log-sum-exp
the whole row's, as Megatron-LM's vocabulary-parallel cross entropy
does; no rank holds more than its share, in bf16. CPU ranks use
F.cross_entropy (parallel.py).
"""

import math

import torch
import torch.distributed as dist
import triton
import triton.language as tl

from data import IGNORE
from report import TrainerError

# Columns read per loop iteration and warps per row: on an H200 the
# forward reads bf16 logits at 3.5 TB/s with these (scripts/device/
# xent_bench.py; docs/benchmarks.md, "The loss in one read").
BLOCK = 4096
WARPS = 8


@triton.jit
def _forward(logits, labels, top_out, total_out, picked_out, stride, vocab, first, BLOCK: tl.constexpr):
    """Per row of a share of the columns (first .. first + vocab): the
    largest logit, the sum of exp(logit - largest), and the label's logit
    where this share holds it (else 0)."""
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
    tl.store(top_out + row, top)
    tl.store(total_out + row, total)
    col = tl.load(labels + row) - first
    here = (col >= 0) & (col < vocab)  # IGNORE (-100) is in no share
    picked = tl.load(x_row + tl.where(here, col, 0)).to(tl.float32)
    tl.store(picked_out + row, tl.where(here, picked, 0.0))


@triton.jit
def _backward(logits, labels, lse_in, grad_in, grad_out, stride, grad_stride, vocab, first, IGNORE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = logits + row * stride
    g_row = grad_out + row * grad_stride
    label = tl.load(labels + row)
    scale = tl.where(label != IGNORE, tl.load(grad_in).to(tl.float32), 0.0)
    col = label - first
    lse = tl.load(lse_in + row)
    for start in range(0, vocab, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < vocab
        x = tl.load(x_row + cols, mask=inside, other=0.0).to(tl.float32)
        g = (tl.exp(x - lse) - (cols == col).to(tl.float32)) * scale
        tl.store(g_row + cols, g.to(grad_out.dtype.element_ty), mask=inside)


class _SummedCrossEntropy(torch.autograd.Function):
    """The token losses of (rows, columns) logits summed, as one float32:
    the columns first .. first + columns of the vocabulary, the rest on
    the other ranks of group (None: the logits are whole)."""

    @staticmethod
    def forward(ctx, logits, labels, first, group):
        top, total, picked = share_stats(logits, labels, first)
        if group is not None:
            top, total, picked = _across(top, total, picked, group)
        lse = top + torch.log(total)
        ctx.save_for_backward(logits, labels, lse)
        ctx.first = first
        return torch.where(labels != IGNORE, lse - picked, 0.0).sum()

    @staticmethod
    def backward(ctx, grad):
        logits, labels, lse = ctx.saved_tensors
        return share_grad(logits, labels, lse, grad, ctx.first), None, None, None


def share_stats(logits, labels, first):
    """Per row of (rows, columns) logits, the vocabulary's columns first ..
    first + columns: the largest logit, the sum of exp(logit - largest),
    and the label's logit where this share holds it, else 0."""
    rows, vocab = logits.shape
    top, total, picked = (torch.empty(rows, device=logits.device, dtype=torch.float32) for _ in range(3))
    _forward[(rows,)](logits, labels, top, total, picked, logits.stride(0), vocab, first, BLOCK=_block(vocab), num_warps=WARPS)
    return top, total, picked


def share_grad(logits, labels, lse, grad, first):
    """The loss's gradient for a share of the columns: softmax, from the
    whole rows' log-sum-exp, less the label's one-hot, times grad."""
    rows, vocab = logits.shape
    out = torch.empty((rows, vocab), device=logits.device, dtype=logits.dtype)
    _backward[(rows,)](logits, labels, lse, grad.contiguous(), out, logits.stride(0), out.stride(0), vocab, first,
                       IGNORE=IGNORE, BLOCK=_block(vocab), num_warps=WARPS)
    return out


def _across(top, total, picked, group):
    """The whole rows' largest logit, sum rescaled to it, and label's
    logit, from every rank's share's."""
    whole = top.clone()
    dist.all_reduce(whole, op=dist.ReduceOp.MAX, group=group)
    total = total * torch.exp(top - whole)
    dist.all_reduce(total, group=group)
    dist.all_reduce(picked, group=group)
    return whole, total, picked


def _block(vocab):
    return min(BLOCK, triton.next_power_of_2(vocab))


def _rows(logits, labels):
    """(rows, columns) logits whose columns are adjacent, and their labels."""
    flat = logits.flatten(0, -2)
    if flat.stride(-1) != 1:
        flat = flat.contiguous()
    return flat, labels.flatten().contiguous()


def summed_cross_entropy(logits, labels):
    """The token losses summed, labels of -100 left out: what
    F.cross_entropy(..., ignore_index=-100, reduction="sum") gives."""
    return _SummedCrossEntropy.apply(*_rows(logits, labels), 0, None)


def cross_entropy(logits, labels):
    """The mean over the tokens whose label is not -100: what
    F.cross_entropy gives (NaN when every label is -100, as there)."""
    flat, labels = _rows(logits, labels)
    return _SummedCrossEntropy.apply(flat, labels, 0, None) / (labels != IGNORE).sum()


def vocab_parallel(tp_mesh, vocab, reduction="mean"):
    """The loss of logits split over the vocabulary across tp_mesh's ranks
    (each holding its share of the columns, as a column-parallel output
    layer leaves them: torch.chunk's shares, the last one shorter where the
    vocabulary does not divide), mean or summed like the functions above;
    every rank gets the whole loss."""
    group, rank, ranks = tp_mesh.get_group(), tp_mesh.get_local_rank(), tp_mesh.size()
    share = math.ceil(vocab / ranks)
    first = rank * share
    width = min(share, vocab - first)
    if width <= 0:
        raise TrainerError("Vocabulary too small for tensor parallelism",
                           f"The model's vocab of {vocab} split over tp = {ranks} ranks leaves rank {rank} no columns of the "
                           "output layer. Lower tp in the layout, or raise vocab in the model block.")

    def loss(logits, labels):
        if logits.shape[-1] != width:
            raise ValueError(f"logits hold {logits.shape[-1]} columns on tensor-parallel rank {rank}, where a vocabulary of {vocab} "
                             f"split over {ranks} ranks gives {width}")
        flat, flat_labels = _rows(logits, labels)
        summed = _SummedCrossEntropy.apply(flat, flat_labels, first, group)
        return summed if reduction == "sum" else summed / (flat_labels != IGNORE).sum()
    return loss
