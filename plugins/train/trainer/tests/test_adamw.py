"""The one-GPU AdamW (adamw.py) against PyTorch's fused AdamW: the same
weights, moments and step counts over steps with a changing learning
rate, weight decay in one group and not the other, a gradient scale and
an overflowed step; the compute copy's weights written from the updated
ones; state_dicts that load into each other; and the compute copy's
forward copying the weights only after they changed elsewhere. It needs
a GPU; run from the repository root:

  python3 -m unittest discover -s plugins/train/trainer/tests -p test_adamw.py -v
"""

import os
import sys
import unittest
from unittest import mock

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import model as M  # noqa: E402
import parallel  # noqa: E402

GPU = torch.cuda.is_available()
if GPU:
    import adamw  # noqa: E402

# Shapes off the kernel's block and on it, a vector and matrices.
SHAPES = [(1000,), (257, 33), (adamw.BLOCK * 3 + 5,) if GPU else (1,), (64, 64)]
BETAS = (0.9, 0.95)


def params(seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s, generator=g).cuda()) for s in SHAPES]


def groups(ps):
    return [{"params": ps[:2], "weight_decay": 0.1}, {"params": ps[2:], "weight_decay": 0.0}]


@unittest.skipUnless(GPU, "needs a GPU")
class CopyWritingAdamWTest(unittest.TestCase):

    def pair(self):
        ours, theirs = params(1), params(1)
        # The last weight's copy in fp16, as under precision "fp16".
        copies = {p: torch.empty_like(p, dtype=torch.float16 if p is ours[-1] else torch.bfloat16) for p in ours}
        return (ours, adamw.CopyWritingAdamW(groups(ours), copies, lr=1e-2, betas=BETAS, eps=1e-8),
                theirs, torch.optim.AdamW(groups(theirs), lr=1e-2, betas=BETAS, eps=1e-8, fused=True))

    @staticmethod
    def step(opt, ps, grads, lr, scale, found):
        for p, g in zip(ps, grads):
            p.grad = g.clone()
        for group in opt.param_groups:
            group["lr"] = lr
        opt.grad_scale, opt.found_inf = scale, found
        opt.step()

    def test_matches_fused_adamw(self):
        ours, opt, theirs, ref = self.pair()
        g = torch.Generator().manual_seed(2)
        one, none = torch.ones((), device="cuda"), torch.zeros((), device="cuda")
        # (learning rate, gradient scale, overflowed)
        plan = [(1e-2, None, None), (5e-3, 2.0, none), (2e-3, 4.0, one), (1e-3, 0.5, none), (1e-3, None, None)]
        for k, (lr, scale, found) in enumerate(plan):
            grads = [torch.randn(s, generator=g).cuda() for s in SHAPES]
            scale = None if scale is None else torch.full((), scale, device="cuda")
            self.step(opt, ours, grads, lr, scale, found)
            self.step(ref, theirs, grads, lr, scale, found)
            for i, (p, q) in enumerate(zip(ours, theirs)):
                msg = f"step {k + 1}, parameter {i}"
                torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7, msg=msg)
                a, b = opt.state[p], ref.state[q]
                torch.testing.assert_close(a["exp_avg"], b["exp_avg"], rtol=1e-6, atol=1e-7, msg=msg)
                torch.testing.assert_close(a["exp_avg_sq"], b["exp_avg_sq"], rtol=1e-6, atol=1e-9, msg=msg)
                self.assertEqual(a["step"].item(), b["step"].item(), msg)
                # The copy is the updated weight, rounded once.
                self.assertTrue(torch.equal(opt.copies[p], p.detach().to(opt.copies[p].dtype)), msg)
        # Four steps counted: the overflowed one taken back.
        self.assertEqual(opt.state[ours[0]]["step"].item(), 4.0)

    def test_state_dicts_load_into_each_other(self):
        ours, opt, theirs, ref = self.pair()
        grads = [torch.randn(s).cuda() for s in SHAPES]
        self.step(opt, ours, grads, 1e-2, None, None)
        self.step(ref, theirs, grads, 1e-2, None, None)
        ours2, opt2, theirs2, ref2 = self.pair()
        opt2.load_state_dict(ref.state_dict())
        ref2.load_state_dict(opt.state_dict())
        self.assertTrue(ref2.param_groups[0]["fused"], "a checkpoint of the one-GPU AdamW keeps fused AdamW fused")
        for p, q in zip(ours2 + theirs2, ours + theirs):
            p.data.copy_(q)
        grads = [torch.randn(s).cuda() for s in SHAPES]
        self.step(opt2, ours2, grads, 1e-2, None, None)
        self.step(ref2, theirs2, grads, 1e-2, None, None)
        for p, q in zip(ours2, theirs2):
            torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7)
            self.assertEqual(opt2.state[p]["step"].item(), 2.0)

    def test_refuses_a_weight_without_its_copy(self):
        ps = params(3)
        with self.assertRaises(ValueError):
            adamw.CopyWritingAdamW(groups(ps), {p: torch.empty_like(p, dtype=torch.bfloat16) for p in ps[1:]}, lr=1e-2)


@unittest.skipUnless(GPU, "needs a GPU")
class ComputeCopyInStepTest(unittest.TestCase):
    """A compute copy stepped by the one-GPU AdamW: its forward reads the
    stepped weights without copying them again, and copies again once a
    weight changed elsewhere (a load)."""

    def test_forward_copies_only_after_an_outside_change(self):
        m = M.Transformer(M.ModelArgs(vocab=512, hidden=64, layers=2, heads=4, kv_heads=2, ffn_hidden=128, seq_len=64))
        M.init_full(m, 1, "cpu")
        m.cuda()
        parallel.compute_copy(m)
        opt = adamw.CopyWritingAdamW(m.parameters(), m.compute_copies, lr=1e-2)
        tokens = torch.randint(0, 512, (2, 65), device="cuda")
        copies = mock.patch.object(torch, "_foreach_copy_", wraps=torch._foreach_copy_)

        def forward_backward():
            parallel.cross_entropy(m(tokens[:, :-1]), tokens[:, 1:]).backward()

        with copies as made:
            forward_backward()
            self.assertEqual(made.call_count, 1, "the first forward copies the weights")
            opt.step()
            opt.zero_grad(set_to_none=True)
            forward_backward()
            self.assertEqual(made.call_count, 1, "a forward after the step copies nothing")
            for p, low in m.compute_copies.items():
                self.assertTrue(torch.equal(low, p.detach().to(torch.bfloat16)))
            with torch.no_grad():
                m.output.weight.mul_(2)
            m(tokens[:, :-1])
            self.assertEqual(made.call_count, 2, "a forward after an outside change copies again")
            self.assertTrue(torch.equal(m.compute_copies[m.output.weight], m.output.weight.detach().to(torch.bfloat16)))


if __name__ == "__main__":
    unittest.main()
