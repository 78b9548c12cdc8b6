"""The trainer's GPU cross entropy (xent.py) against F.cross_entropy in
fp32: the loss, mean and summed, and the logits' gradient, for each
precision's logits, vocabularies that are and are not a multiple of the
kernels' block, labels left out (-100), logits whose rows are not
adjacent in memory, and the vocabulary split in shares as tensor
parallelism splits it. It needs a GPU; run from the repository root:

  python3 -m unittest discover -s plugins/train/trainer/tests -p test_xent.py -v
"""

import os
import sys
import unittest

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

GPU = torch.cuda.is_available()
if GPU:
    import xent  # noqa: E402

# The loss is summed in fp32 on both sides, in different orders.
LOSS_TOL = 1e-5
# Each gradient element is computed in fp32 on both sides and rounded
# once to the logits' dtype, so the two lie at most one step of that
# dtype apart: 2^-7 of the element in bf16 (8 significant bits), 2^-10
# in fp16 (11 bits).
GRAD_TOL = {torch.float32: 1e-5, torch.float16: 2 ** -10, torch.bfloat16: 2 ** -7}


def reference(logits, labels, reduction):
    x = logits.detach().clone().requires_grad_(True)
    loss = F.cross_entropy(x.flatten(0, -2).float(), labels.flatten(), ignore_index=-100, reduction=reduction)
    loss.backward()
    return loss.detach(), x.grad


def ours(logits, labels, reduction):
    x = logits.detach().clone().requires_grad_(True)
    fn = xent.cross_entropy if reduction == "mean" else xent.summed_cross_entropy
    loss = fn(x, labels)
    loss.backward()
    return loss.detach(), x.grad


@unittest.skipUnless(GPU, "needs a GPU")
class CrossEntropyTest(unittest.TestCase):
    CASES = [
        # name, (batch, seq), vocab, dtype, share of labels left out
        ("bf16 Llama 3 vocabulary", (2, 64), 128256, torch.bfloat16, 0.0),
        ("bf16 masked", (3, 33), 32000, torch.bfloat16, 0.3),
        ("fp16 GPT-2 vocabulary", (2, 17), 50257, torch.float16, 0.1),
        ("fp32 under one block", (4, 9), 517, torch.float32, 0.2),
        ("bf16 exactly one block", (1, 8), 4096, torch.bfloat16, 0.0),
    ]

    def test_against_f_cross_entropy(self):
        for name, shape, vocab, dtype, left_out in self.CASES:
            g = torch.Generator(device="cuda").manual_seed(0)
            logits = (torch.randn(*shape, vocab, device="cuda", generator=g) * 4).to(dtype)
            labels = torch.randint(0, vocab, shape, device="cuda", generator=g)
            labels[torch.rand(shape, device="cuda", generator=g) < left_out] = -100
            for reduction in ("mean", "sum"):
                with self.subTest(name, reduction=reduction):
                    self.assert_same(ours(logits, labels, reduction), reference(logits, labels, reduction), dtype)

    def test_rows_apart_in_memory(self):
        # A slice of wider logits: rows a stride of 2 x vocab apart.
        wide = torch.randn(2, 5, 2 * 1000, device="cuda").to(torch.bfloat16)
        logits = wide[..., :1000]
        labels = torch.randint(0, 1000, (2, 5), device="cuda")
        self.assert_same(ours(logits, labels, "mean"), reference(logits, labels, "mean"), torch.bfloat16)

    def test_every_label_left_out(self):
        logits = torch.randn(2, 3, 100, device="cuda")
        labels = torch.full((2, 3), -100, device="cuda")
        loss, grad = ours(logits, labels, "sum")
        self.assertEqual(loss.item(), 0.0)
        self.assertEqual(grad.abs().max().item(), 0.0)
        mean, _ = ours(logits, labels, "mean")
        self.assertTrue(torch.isnan(mean).item(), "F.cross_entropy's mean over no tokens is NaN")

    def test_shares_of_the_vocabulary(self):
        # Tensor parallelism's shares (torch.chunk's: 3 of 334, 334, 333
        # columns), each rank's statistics combined as xent's all-reduces
        # combine them, and each share's gradient against its columns of
        # the whole rows' gradient.
        vocab, shares = 1001, 3
        g = torch.Generator(device="cuda").manual_seed(1)
        logits = (torch.randn(6, vocab, device="cuda", generator=g) * 4).to(torch.bfloat16)
        labels = torch.randint(0, vocab, (6,), device="cuda", generator=g)
        labels[2] = -100
        ref_loss, ref_grad = reference(logits, labels, "sum")
        width = -(-vocab // shares)
        firsts = range(0, vocab, width)
        stats = [xent.share_stats(logits[:, f:f + width], labels, f) for f in firsts]
        top = torch.stack([s[0] for s in stats]).amax(0)
        total = sum(s[1] * torch.exp(s[0] - top) for s in stats)
        picked = sum(s[2] for s in stats)
        lse = top + torch.log(total)
        loss = torch.where(labels != -100, lse - picked, 0.0).sum()
        one = torch.ones((), device="cuda")
        grad = torch.cat([xent.share_grad(logits[:, f:f + width], labels, lse, one, f) for f in firsts], dim=1)
        self.assert_same((loss, grad), (ref_loss, ref_grad), torch.bfloat16)

    def assert_same(self, got, want, dtype):
        loss, grad = got
        ref_loss, ref_grad = want
        self.assertEqual(grad.dtype, ref_grad.dtype)
        self.assertLessEqual(abs(loss.item() - ref_loss.item()), LOSS_TOL * abs(ref_loss.item()), f"loss {loss.item()} against {ref_loss.item()}")
        worst = (grad.float() - ref_grad.float()).abs().max().item() / ref_grad.float().abs().max().item()
        self.assertLessEqual(worst, GRAD_TOL[dtype], "largest gradient difference, relative to the largest element")


if __name__ == "__main__":
    unittest.main()


class _Mesh:
    """The tensor-parallel mesh's three answers xent.vocab_parallel asks."""

    def __init__(self, rank, ranks):
        self.rank, self.ranks = rank, ranks

    def get_group(self):
        return None

    def get_local_rank(self):
        return self.rank

    def size(self):
        return self.ranks


@unittest.skipUnless(GPU, "xent's kernels need a GPU (Triton)")
class VocabularyShareTest(unittest.TestCase):
    def test_a_rank_without_columns_is_refused(self):
        from report import TrainerError
        # 2 columns over 4 ranks: shares of 1, ranks 2 and 3 get none.
        with self.assertRaises(TrainerError) as caught:
            xent.vocab_parallel(_Mesh(3, 4), 2)
        self.assertIn("Lower tp", caught.exception.detail)
        xent.vocab_parallel(_Mesh(1, 4), 2)  # rank 1 holds the second column
