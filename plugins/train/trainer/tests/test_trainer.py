"""The trainer's own tests. They need PyTorch (2.6 or later); the GPU ones
skip without a GPU. Run from the repository root:

  python3 -m unittest discover -s plugins/train/trainer/tests -v

scripts/device/train-tests.sh runs them on a GPU machine.
"""

import dataclasses
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINER = os.path.dirname(HERE)
sys.path.insert(0, TRAINER)

import config as C  # noqa: E402
import data as D  # noqa: E402
import lora as L  # noqa: E402
import lossscale as LS  # noqa: E402
import model as M  # noqa: E402
import parallel  # noqa: E402
import preflight as P  # noqa: E402
import report as R  # noqa: E402

GPU = torch.cuda.is_available()
# LoRA over an fp8 base against LoRA over bf16, per step (the base's
# products carry fp8's rounding; the adapters train in bf16 alike).
FP8_LORA_TOLERANCE = 2e-2
# Configs plugins/train wrote (go test ./plugins/train -run
# TestTrainerConfigFiles -update): a tiny model's pretrain run, and a
# finetune of it with every field set.
TESTDATA = os.path.join(HERE, "testdata")


def written(name):
    """The config.json plugins/train wrote, as JSON."""
    with open(os.path.join(TESTDATA, name)) as f:
        return json.load(f)


def schedule(**fields):
    """The tiny run's config with the schedule's fields replaced."""
    return dataclasses.replace(C.load(os.path.join(TESTDATA, "pretrain.json")), **fields)


def write_shard(prefix, docs, dtype=np.uint16, code=8):
    """A Megatron indexed dataset as plugins/dataprep/shard writes it."""
    np.concatenate(docs).astype(dtype).tofile(prefix + ".bin")
    n = len(docs)
    with open(prefix + ".idx", "wb") as f:
        f.write(D.MAGIC + (1).to_bytes(8, "little") + bytes([code]) + n.to_bytes(8, "little") + (n + 1).to_bytes(8, "little"))
        sizes = np.array([len(d) for d in docs], np.int32)
        f.write(sizes.tobytes())
        f.write(np.concatenate([[0], np.cumsum(sizes)[:-1] * np.dtype(dtype).itemsize]).astype(np.int64).tobytes())
        f.write(np.arange(n + 1, dtype=np.int64).tobytes())


def markov_docs(vocab, docs, length, seed):
    """Token streams with structure a model can learn: each token mostly
    follows from the one before."""
    rng = np.random.default_rng(seed)
    nxt = rng.integers(0, vocab, size=vocab)
    out = []
    for _ in range(docs):
        t = [int(rng.integers(vocab))]
        for _ in range(length - 1):
            t.append(int(nxt[t[-1]]) if rng.random() < 0.8 else int(rng.integers(vocab)))
        out.append(np.array(t))
    return out


class DataTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        write_shard(self.dir + "/a", markov_docs(1000, 10, 500, 0))
        write_shard(self.dir + "/b", markov_docs(1000, 3, 300, 1), np.int32, 4)

    def test_samples_cut_each_shards_stream(self):
        shards = D.TokenShards([self.dir + "/a", self.dir + "/b"], 64)
        self.assertEqual(shards.samples, (5000 - 1) // 64 + (900 - 1) // 64)
        stream = np.fromfile(self.dir + "/a.bin", np.uint16).astype(np.int64)
        np.testing.assert_array_equal(shards.sample(1), stream[64:129])
        first_b = np.fromfile(self.dir + "/b.bin", np.int32).astype(np.int64)[:65]
        np.testing.assert_array_equal(shards.sample((5000 - 1) // 64), first_b)

    def test_data_parallel_ranks_split_the_global_batch(self):
        b = D.Batches(D.TokenShards([self.dir + "/a"], 64), 8, seed=3)
        whole = b.local(50, 0, 1)  # step 50 is past the first epoch of 78 samples
        self.assertTrue(torch.equal(whole, torch.cat([b.local(50, r, 4) for r in range(4)])))
        again = D.Batches(D.TokenShards([self.dir + "/a"], 64), 8, seed=3)
        self.assertTrue(torch.equal(whole, again.local(50, 0, 1)), "a resumed run reads what an uninterrupted one did")

    def test_validation_batches_in_file_order(self):
        shards = D.TokenShards([self.dir + "/a"], 64)  # 78 samples
        b = D.InOrder(shards, 8, 100)
        self.assertEqual(b.batches, 10, "as many batches as cover the set once")
        self.assertEqual(D.InOrder(shards, 8, 3).batches, 3)
        np.testing.assert_array_equal(b.local(1, 0, 1)[0].numpy(), shards.sample(8))
        last = b.local(9, 0, 1)
        np.testing.assert_array_equal(last[-1].numpy(), shards.sample(1), "the last batch wraps round to the first samples")
        self.assertTrue(torch.equal(last, torch.cat([b.local(9, r, 2) for r in range(2)])))
        self.assertTrue(torch.equal(b.local(4, 1, 2), D.InOrder(shards, 8, 100).local(4, 1, 2)), "the same at every validation")

    def test_bad_index(self):
        with open(self.dir + "/bad.idx", "wb") as f:
            f.write(b"not an index at all")
        with self.assertRaises(D.DataError):
            D.TokenShards([self.dir + "/bad"], 8)


class CompileBlocksTest(unittest.TestCase):
    """A block the compiler cannot handle trains eagerly on every path
    that compiles blocks, the GPU's included: compile_blocks itself tells
    the compiler to fall back."""

    def test_compiled_blocks_fall_back_to_eager(self):
        import torch._dynamo
        saved = torch._dynamo.config.suppress_errors
        self.addCleanup(setattr, torch._dynamo.config, "suppress_errors", saved)
        torch._dynamo.config.suppress_errors = False
        part = torch.nn.Module()
        part.layers = torch.nn.ModuleDict({"0": torch.nn.Linear(4, 4)})
        parallel.compile_blocks(part)
        self.assertTrue(torch._dynamo.config.suppress_errors)


class MaskTest(unittest.TestCase):
    """Loss masks beside shards, as data_prep writes them for chat records:
    each document a prompt (mask 0) then a reply (mask 1)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        docs = markov_docs(512, 6, 100, 3)
        write_shard(self.dir + "/c", docs)
        write_shard(self.dir + "/c.mask", [np.repeat([0, 1], [60, 40]) for _ in docs], np.uint8, 1)
        self.shards = D.TokenShards([self.dir + "/c"], 64, [self.dir + "/c.mask"])

    def test_prompt_tokens_logits_get_no_gradient(self):
        b = D.Batches(self.shards, 4, seed=0)
        tokens, mask = b.local(1, 0, 1), b.local_mask(1, 0, 1)
        inputs, labels = D.inputs_and_labels(tokens, mask)
        trained = mask[:, 1:] == 1
        self.assertTrue(trained.any() and (~trained).any(), "the batch holds prompt and reply tokens")
        m = M.Transformer(ModelTest.args)
        M.init_full(m, 1, "cpu")
        logits = m(inputs)
        logits.retain_grad()
        loss = parallel.summed_cross_entropy(logits, labels) / trained.sum()
        loss.backward()
        self.assertTrue(torch.equal(logits.grad[~trained], torch.zeros_like(logits.grad[~trained])), "prompt tokens' logits have gradients")
        self.assertTrue((logits.grad[trained].abs().sum(-1) > 0).all(), "a reply token's logits have no gradient")
        want = torch.nn.functional.cross_entropy(logits[trained].float(), tokens[:, 1:][trained])
        self.assertAlmostEqual(loss.item(), want.item(), places=4, msg="the loss is the mean over the trained tokens")

    def test_unmasked_labels_are_the_next_tokens(self):
        tokens = torch.from_numpy(np.stack([self.shards.sample(0)]))
        inputs, labels = D.inputs_and_labels(tokens)
        self.assertTrue(torch.equal(inputs, tokens[:, :-1]) and torch.equal(labels, tokens[:, 1:]))

    def test_mask_must_fit_its_shard(self):
        write_shard(self.dir + "/short.mask", [np.ones(10)], np.uint8, 1)
        with self.assertRaisesRegex(D.DataError, "10 mask values for the 600 tokens"):
            D.TokenShards([self.dir + "/c"], 64, [self.dir + "/short.mask"])
        with self.assertRaisesRegex(D.DataError, "not a loss mask"):
            D.TokenShards([self.dir + "/c"], 64, [self.dir + "/c"])


class ScheduleTest(unittest.TestCase):
    def test_warmup_then_cosine_to_min(self):
        cfg = schedule(lr=1.0, min_lr=0.1, warmup_steps=10, steps=110, schedule="cosine")
        self.assertAlmostEqual(R.lr_at(0, cfg), 0.1)
        self.assertAlmostEqual(R.lr_at(9, cfg), 1.0)
        self.assertAlmostEqual(R.lr_at(10, cfg), 1.0)
        self.assertAlmostEqual(R.lr_at(109, cfg), 0.1)

    def test_linear_and_constant(self):
        cfg = schedule(lr=1.0, min_lr=0.0, warmup_steps=0, steps=11, schedule="linear")
        self.assertAlmostEqual(R.lr_at(5, cfg), 0.5)
        self.assertAlmostEqual(R.lr_at(10, dataclasses.replace(cfg, schedule="constant")), 1.0)


class ModelTest(unittest.TestCase):
    args = M.ModelArgs(layers=4, hidden=128, ffn_hidden=256, heads=4, kv_heads=2, vocab=512, seq_len=64)

    def test_gpuflows_counts_are_the_models(self):
        """params and adapter_params, which gpuflow counts as its estimator
        does, are what the trainer builds, tied or not."""
        for name in ("pretrain.json", "config.json"):
            with self.subTest(name):
                cfg = C.load(os.path.join(TESTDATA, name))
                m = M.Transformer(M.ModelArgs.from_config(cfg.model))
                self.assertEqual(sum(p.numel() for p in m.parameters()), cfg.params)
                if cfg.lora:
                    L.add_adapters(m, cfg.lora)
                    self.assertEqual(sum(p.numel() for p in m.parameters() if p.requires_grad), cfg.adapter_params)

    def test_initial_loss_is_uniform(self):
        m = M.Transformer(self.args)
        M.init_full(m, 1, "cpu")
        tokens = torch.randint(0, 512, (2, 65))
        loss = torch.nn.functional.cross_entropy(m(tokens[:, :-1]).flatten(0, 1), tokens[:, 1:].flatten())
        self.assertLess(abs(loss.item() - math.log(512)), 0.1)

    def test_pipeline_stages_start_as_the_whole_model(self):
        import copy
        whole = M.Transformer(self.args)
        M.init_full(whole, 5, "cpu")
        for stage in range(4):
            part = M.keep_stage(copy.deepcopy(M.Transformer(self.args)), stage, 4)
            M.init_full(part, 5, "cpu")
            self.assertEqual(list(part.layers.keys()), [str(stage)])
            for k, v in part.state_dict().items():
                self.assertTrue(torch.equal(v, whole.state_dict()[k]), k)

    def test_uneven_stages_chain_to_the_whole_model(self):
        import copy
        whole = M.Transformer(self.args)
        M.init_full(whole, 5, "cpu")
        sizes = parallel.chunk_layers(4, 2, 1, first=1)
        self.assertEqual(sizes, [1, 3])
        first, last = (M.keep_stage(copy.deepcopy(whole), s, 2, sizes) for s in (0, 1))
        self.assertEqual((list(first.layers.keys()), list(last.layers.keys())), (["0"], ["1", "2", "3"]))
        tokens = torch.randint(0, 512, (2, 64))
        torch.testing.assert_close(last(first(tokens)), whole(tokens))

    def test_interleaved_uneven_chunks_chain_to_the_whole_model(self):
        import copy
        args = dataclasses.replace(self.args, layers=6)
        whole = M.Transformer(args)
        M.init_full(whole, 5, "cpu")
        sizes = parallel.chunk_layers(6, 2, 2, first=2)  # rank 0: 2 layers, rank 1: 4, each over 2 chunks
        self.assertEqual(sizes, [1, 2, 1, 2])
        chunks = [M.keep_stage(copy.deepcopy(whole), c, 4, sizes) for c in range(4)]
        self.assertEqual([list(c.layers.keys()) for c in chunks], [["0"], ["1", "2"], ["3"], ["4", "5"]])
        tokens = torch.randint(0, 512, (2, 64))
        x = tokens
        for c in chunks:
            x = c(x)
        torch.testing.assert_close(x, whole(tokens))

    def test_chunk_layers_follow_the_layout(self):
        cases = {(126, 16, 1, 7, 7): [7] + [8] * 14 + [7], (70, 12, 1, 5, 5): [5] + [6] * 10 + [5],
                 (12, 2, 2, 4, 8): [2, 4, 2, 4], (8, 4, 2, 0, 0): [1] * 8, (8, 3, 1, 0, 4): [2, 2, 4],
                 (14, 3, 2, 2, 0): [1, 3, 3, 1, 3, 3], (125, 16, 1, 6, 7): [6] + [8] * 14 + [7]}
        for (layers, pp, vp, first, last), want in cases.items():
            self.assertEqual(parallel.chunk_layers(layers, pp, vp, first, last), want, (layers, pp, vp, first, last))

    def test_chunk_layers_refuse_a_split_that_loses_layers(self):
        # 4 on two stages of one each; a rest that does not divide; a
        # stage of one layer over vp 2; nothing left for the stage between;
        # a negative count.
        for layers, pp, vp, first, last in ((4, 2, 1, 1, 1), (8, 3, 1, 1, 0), (6, 2, 2, 1, 0), (8, 3, 1, 4, 4), (8, 2, 1, -1, 0)):
            with self.assertRaises(R.TrainerError, msg=(layers, pp, vp, first, last)):
                parallel.chunk_layers(layers, pp, vp, first, last)

    def test_tied_last_stage_projects_with_the_embedding(self):
        import copy
        import dataclasses
        whole = M.Transformer(dataclasses.replace(self.args, tied_embeddings=True))
        M.init_full(whole, 5, "cpu")
        first, last = M.keep_stage(copy.deepcopy(whole), 0, 2), M.keep_stage(copy.deepcopy(whole), 1, 2)
        self.assertFalse(last.embeds_input)
        self.assertTrue(torch.equal(last.tok_embeddings.weight, first.tok_embeddings.weight))
        tokens = torch.randint(0, 512, (2, 64))
        torch.testing.assert_close(last(first(tokens)), whole(tokens))

    def test_recomputation_keeps_gradients(self):
        assert_recomputation_keeps_gradients(self.args, torch.randint(0, 512, (2, 65), generator=torch.Generator().manual_seed(1)))


def assert_recomputation_keeps_gradients(args, tokens):
    """Every parameter's gradient on tokens is the same under selective
    and full recomputation as without."""
    grads = {}
    for mode in ("none", "selective", "full"):
        m = M.Transformer(args)
        M.init_full(m, 1, "cpu")
        parallel.set_recompute(m, mode)
        parallel.cross_entropy(m(tokens[:, :-1]), tokens[:, 1:]).backward()
        grads[mode] = torch.cat([p.grad.flatten() for p in m.parameters()])
    for mode in ("selective", "full"):
        torch.testing.assert_close(grads[mode], grads["none"], rtol=1e-5, atol=1e-6)


def band_reference(q, k, v, window):
    """Sliding-window attention by its definition: scores of keys more
    than window-1 tokens back, or ahead, set to minus infinity, each key
    head repeated for its group of query heads."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scores = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    seq = q.shape[2]
    allowed = torch.tensor([[0 <= i - j < window for j in range(seq)] for i in range(seq)], device=q.device)
    return (scores.masked_fill(~allowed, float("-inf")).softmax(-1) @ v.float()).to(q.dtype)


class SlidingWindowTest(unittest.TestCase):
    """Windowed attention (band_mask, banded_attention) on CPU (SDPA with a
    boolean mask) and, with a GPU, compiled flex_attention."""

    def test_equals_a_masked_reference(self):
        cases = [("cpu", torch.float32, seq, window) for seq, window in ((64, 16), (200, 33), (256, 1))]
        if GPU:  # each shape and type compiles flex_attention anew: one of each type
            cases += [("cuda", dtype, 200, 33) for dtype in (torch.float32, torch.bfloat16)]
        for device, dtype, seq, window in cases:
            with self.subTest(device=device, dtype=dtype, seq=seq, window=window):
                g = torch.Generator(device=device).manual_seed(seq)
                q = torch.randn(2, 4, seq, 32, device=device, dtype=dtype, generator=g, requires_grad=True)
                k, v = (torch.randn(2, 2, seq, 32, device=device, dtype=dtype, generator=g, requires_grad=True) for _ in range(2))
                got = M.banded_attention(q, k, v, M.band_mask(seq, window, torch.device(device)), True)
                want = band_reference(q, k, v, window)
                tol = {"rtol": 2e-2, "atol": 2e-2} if dtype == torch.bfloat16 else {"rtol": 1e-4, "atol": 1e-5}
                torch.testing.assert_close(got, want, **tol)
                if dtype == torch.bfloat16:
                    continue  # the gradients' check needs fp32's precision
                grads = torch.autograd.grad(got.float().square().sum(), (q, k, v))
                want_grads = torch.autograd.grad(want.float().square().sum(), (q, k, v))
                for a, b in zip(grads, want_grads):
                    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)

    def test_a_window_as_long_as_the_sequence_is_full_causal(self):
        a = dataclasses.replace(ModelTest.args, window=64, windowed_layers=(0, 1, 2, 3))
        full, windowed = M.Transformer(ModelTest.args), M.Transformer(a)
        M.init_full(full, 3, "cpu")
        M.init_full(windowed, 3, "cpu")
        tokens = torch.randint(0, 512, (2, 64), generator=torch.Generator().manual_seed(4))
        self.assertEqual(windowed.bands(tokens), {})
        self.assertTrue(torch.equal(windowed(tokens), full(tokens)))

    def test_only_the_windowed_layers_change(self):
        """Qwen2's split: layers before max_window_layers attend over the
        whole sequence; a window shorter than the sequence changes the
        logits, and every recomputation mode keeps its gradients."""
        a = dataclasses.replace(ModelTest.args, window=8, windowed_layers=(2, 3))
        m = M.Transformer(a)
        self.assertEqual([b.attention.window for b in m.layers.values()], [0, 0, 8, 8])
        full = M.Transformer(ModelTest.args)
        M.init_full(m, 3, "cpu")
        M.init_full(full, 3, "cpu")
        tokens = torch.randint(0, 512, (2, 65), generator=torch.Generator().manual_seed(5))
        self.assertFalse(torch.allclose(m(tokens[:, :-1]), full(tokens[:, :-1])))
        grads = {}
        for mode in ("none", "selective", "full"):
            m.zero_grad()
            for b in m.layers.values():
                b.recompute = mode
            torch.nn.functional.cross_entropy(m(tokens[:, :-1]).flatten(0, 1), tokens[:, 1:].flatten()).backward()
            grads[mode] = torch.cat([p.grad.flatten() for p in m.parameters()])
        for mode in ("selective", "full"):
            torch.testing.assert_close(grads[mode], grads["none"], rtol=1e-5, atol=1e-6)

    @unittest.skipUnless(GPU, "needs a GPU")
    def test_compiled_blocks_match_eager(self):
        """Compiled blocks (the trainer's compile = true) with the band as a
        block mask, and selective recomputation keeping flex_attention's
        output, give the eager model's logits and gradients."""
        a = dataclasses.replace(ModelTest.args, window=16, windowed_layers=(0, 1, 2, 3))
        m = M.Transformer(a)
        M.init_full(m, 6, "cpu")
        m = m.cuda().to(torch.bfloat16)
        m.init_buffers(torch.device("cuda"))
        import copy
        compiled = copy.deepcopy(m)
        parallel.set_recompute(compiled, "selective")
        parallel.compile_blocks(compiled)
        tokens = torch.randint(0, 512, (2, 65), device="cuda", generator=torch.Generator(device="cuda").manual_seed(7))
        outs = []
        for net in (m, compiled):
            logits = net(tokens[:, :-1])
            torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten()).backward()
            outs.append((logits.float(), net.layers["0"].attention.q_proj.weight.grad.float()))
        torch.testing.assert_close(outs[1][0], outs[0][0], rtol=3e-2, atol=3e-2)
        torch.testing.assert_close(outs[1][1], outs[0][1], rtol=5e-2, atol=5e-3)


class ComputeCopyTest(unittest.TestCase):
    """One GPU's mixed precision without FSDP2: the forward and backward of
    a bf16 copy, fp32 weights and gradients in the model itself."""

    def test_gradients_are_the_bf16_models_in_fp32(self):
        import copy
        import dataclasses
        a = dataclasses.replace(ModelTest.args, tied_embeddings=True)
        m = M.Transformer(a)
        M.init_full(m, 1, "cpu")
        names = [k for k, _ in m.named_parameters()]
        want = copy.deepcopy(m).to(torch.bfloat16)
        want.rope = m.rope  # FSDP2 casts parameters only, so the rotary table stays fp32
        parallel.compute_copy(m)
        tokens = torch.randint(0, 512, (4, 65), generator=torch.Generator().manual_seed(2))
        for half in (slice(0, 2), slice(2, 4)):  # two micro-batches: fp32 gradients summed over both
            parallel.cross_entropy(m(tokens[half, :-1]), tokens[half, 1:]).backward()
            parallel.cross_entropy(want(tokens[half, :-1]), tokens[half, 1:]).backward()
        self.assertEqual([k for k, _ in m.named_parameters()], names)
        self.assertEqual(list(m.state_dict()), list(M.Transformer(a).state_dict()))
        for (k, p), q in zip(m.named_parameters(), want.parameters()):
            self.assertEqual((p.dtype, p.grad.dtype), (torch.float32, torch.float32), k)
            torch.testing.assert_close(p.grad, q.grad.float(), rtol=2e-2, atol=1e-4, msg=k)

    def test_each_forward_reads_the_weights_as_they_are(self):
        m = M.Transformer(ModelTest.args)
        M.init_full(m, 1, "cpu")
        parallel.compute_copy(m)
        tokens = torch.randint(0, 512, (2, 64))
        before = m(tokens)
        with torch.no_grad():
            m.output.weight.mul_(2)
        self.assertEqual(before.dtype, torch.bfloat16)
        torch.testing.assert_close(m(tokens), before * 2, rtol=2e-2, atol=1e-2)


class LossScalingTest(unittest.TestCase):
    """The trainer's fp16 step (train.Trainer's _forward_backward, _clip,
    _optimizer_step and _scale_figures) on a small model: a CPU rank's
    path (fp32, the step skipped from the host) and, on a GPU, one GPU's
    (an fp16 compute copy, the one-GPU AdamW skipping by itself)."""

    GROWTH = 3
    DEVICES = ["cpu"] + (["cuda"] if GPU else [])

    def trainer(self, device):
        import types
        import train as T
        alone = device == "cuda"
        m = M.Transformer(ModelTest.args)
        M.init_full(m, 1, "cpu")
        m.to(device)
        if alone:
            parallel.compute_copy(m, torch.float16)
        t = T.Trainer.__new__(T.Trainer)
        t.parts, t.tied, t.device, t.alone, t.accum = [m], None, torch.device(device), alone, 1
        t.layout = types.SimpleNamespace(pp=1, tp=1, micro_batch=2)
        t.cfg = types.SimpleNamespace(masks=[])
        t.loss_fn = parallel.cross_entropy
        if alone:
            import adamw
            t.optimizers = [adamw.CopyWritingAdamW(m.parameters(), m.compute_copies, lr=1e-3)]
        else:
            t.optimizers = [torch.optim.AdamW(m.parameters(), lr=1e-3)]
        t.scaler = LS.LossScaler(device, growth_interval=self.GROWTH)
        tokens = torch.randint(0, 512, (2, 65), generator=torch.Generator().manual_seed(3)).to(device)
        return t, (tokens[:, :-1], tokens[:, 1:])

    def step(self, t, batch, k, inject=False):
        loss = t._forward_backward(batch)
        if inject:
            p = next(q for q in t.parts[0].parameters() if q.grad is not None)
            p.grad.view(-1)[0] = float("inf")
        t._optimizer_step(t._clip())
        figures, skipped = t._scale_figures(k)
        return loss.item(), figures, skipped

    @staticmethod
    def weights(t):
        return {k: v.detach().clone() for k, v in t.parts[0].state_dict().items()}

    def test_overflow_skips_the_step_and_backs_off(self):
        for device in self.DEVICES:
            with self.subTest(device):
                self.overflow_skips(device)

    def overflow_skips(self, device):
        t, batch = self.trainer(device)
        before = self.weights(t)
        _, figures, skipped = self.step(t, batch, 1, inject=True)
        self.assertTrue(skipped)
        self.assertEqual(figures, {"loss_scale": LS.INIT_SCALE, "skipped_steps": 1})
        self.assertEqual(t.scaler.state_dict()["scale"], LS.INIT_SCALE * LS.BACKOFF_FACTOR)
        for k, v in self.weights(t).items():
            self.assertTrue(torch.equal(v, before[k]), f"{k} changed in a skipped step")
        steps = [float(s["step"]) for s in t.optimizers[0].state.values() if "step" in s]
        self.assertTrue(all(s == 0 for s in steps), f"the optimizer counted a skipped step: {steps}")
        _, figures, skipped = self.step(t, batch, 2)
        self.assertFalse(skipped)
        self.assertEqual(figures, {"loss_scale": LS.INIT_SCALE * LS.BACKOFF_FACTOR, "skipped_steps": 1})
        self.assertTrue(any(not torch.equal(v, before[k]) for k, v in self.weights(t).items()), "a clean step changed nothing")

    def test_grows_after_clean_steps(self):
        for device in self.DEVICES:
            with self.subTest(device):
                t, batch = self.trainer(device)
                used = [self.step(t, batch, k)[1]["loss_scale"] for k in range(1, 2 * self.GROWTH + 1)]
                s = LS.INIT_SCALE
                self.assertEqual(used, [s] * self.GROWTH + [2 * s] * self.GROWTH, "grown once, then counted afresh")
                self.assertEqual((t.scaler.state_dict()["scale"], t.scaler.skipped_steps), (4 * s, 0))

    def test_clean_steps_train_as_without_scaling(self):
        """Scaling by a power of two and dividing it out again changes no
        bit of an fp32 gradient: CPU ranks with and without it agree."""
        runs = []
        for scaled in (True, False):
            t, batch = self.trainer("cpu")
            if not scaled:
                t.scaler = None
            losses = [self.step(t, batch, k)[0] for k in range(1, 4)]
            runs.append((losses, self.weights(t)))
        self.assertEqual(runs[0][0], runs[1][0])
        for k, v in runs[0][1].items():
            self.assertTrue(torch.equal(v, runs[1][1][k]), f"{k}: differs by up to {(v - runs[1][1][k]).abs().max().item():.2e}")

    def test_state_resumes_the_same_scale(self):
        for device in self.DEVICES:
            with self.subTest(device):
                self.resumes(device)

    def resumes(self, device):
        t, batch = self.trainer(device)
        self.step(t, batch, 1, inject=True)
        self.step(t, batch, 2)
        state = json.loads(json.dumps(t.scaler.state_dict()))  # as the checkpoint's gpuflow.json holds it
        self.assertEqual((state["scale"], state["_growth_tracker"], state["skipped_steps"]), (LS.INIT_SCALE / 2, 1, 1))
        again = LS.LossScaler(t.device)
        again.load_state_dict(state)
        self.assertEqual(again.state_dict(), t.scaler.state_dict())
        t2, _ = self.trainer(device)
        t2.scaler = again
        for k in range(3, 3 + self.GROWTH):
            self.assertEqual(self.step(t2, batch, k)[1], self.step(t, batch, k)[1])
        self.assertEqual(again.state_dict()["scale"], LS.INIT_SCALE)


def assert_lora_starts_at_the_base_and_merges(test, args, spec, tokens):
    """LoRA (spec) over a model of args gives the base's outputs on tokens
    at first, trains its adapters alone, and once B is off zero, merged
    into the base, gives what the adapted model gave. Returns how many
    layers it adapted."""
    base = M.Transformer(args)
    M.init_full(base, 1, "cpu")
    m = M.Transformer(args)
    adapted_layers = L.add_adapters(m, spec)
    M.init_full(m, 1, "cpu")
    m.load_state_dict(base.state_dict(), strict=False)
    torch.testing.assert_close(m(tokens), base(tokens))
    trained = [k for k, p in m.named_parameters() if p.requires_grad]
    test.assertTrue(trained and all(L.is_adapter(k) for k in trained))
    with torch.no_grad():
        for k, p in m.named_parameters():
            if ".lora_b." in k:
                p.normal_(0, 0.05)
    adapted = m(tokens)
    L.merge_into_base(m)
    merged = M.Transformer(args)
    merged.load_state_dict({k: v for k, v in m.state_dict().items() if not L.is_adapter(k)})
    torch.testing.assert_close(merged(tokens), adapted, rtol=1e-4, atol=1e-4)
    return adapted_layers


class LoRATest(unittest.TestCase):
    def test_starts_at_the_base_model_and_merges_exactly(self):
        a = ModelTest.args
        spec = C.LoRAConfig(rank=4, alpha=8, targets=["q", "v_proj", "down"], dropout=0.0)
        self.assertEqual(assert_lora_starts_at_the_base_and_merges(self, a, spec, torch.randint(0, 512, (2, 64))), 3 * a.layers)

    def test_unknown_target(self):
        with self.assertRaises(ValueError):
            L.target_names(["qkv"])


class FP8ConvertTest(unittest.TestCase):
    def test_biases_stay(self):
        import fp8
        args = M.ModelArgs(layers=1, hidden=64, ffn_hidden=128, heads=4, kv_heads=2, vocab=256, seq_len=32, qkv_bias=True)
        with torch.device("meta"):
            m = M.Transformer(args)
            before = {n: tuple(p.shape) for n, p in m.named_parameters()}
            self.assertEqual(fp8.convert(m), 7)
        after = {n: tuple(p.shape) for n, p in m.named_parameters()}
        self.assertEqual(after, before)
        self.assertTrue(any(n.endswith("q_proj.bias") for n in after))


class ScaledMMCalls:
    """Counts torch._scaled_mm calls, forward and backward, under a
    dispatch mode (the autograd engine carries it into the backward)."""

    def __enter__(self):
        from torch.utils._python_dispatch import TorchDispatchMode
        counter = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if func.overloadpacket.__name__ == "_scaled_mm":
                    counter.calls += 1
                return func(*args, **(kwargs or {}))

        self.calls, self.mode = 0, Mode()
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        self.mode.__exit__(*exc)


def fp8_rounded(t, dtype, amax=None):
    """t cast to fp8 under its per-tensor scale and back: the values an fp8
    product multiplies."""
    import fp8
    q, inv = fp8._quantize(t, dtype, amax)
    return q.float() * inv


def relative(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


class FP8FrozenTest(unittest.TestCase):
    """LoRA's frozen base in fp8 (fp8.frozen_linear) on the CPU, where
    torch._scaled_mm runs fp8 products too, with fp32 results."""

    def test_input_gradient_is_the_fp8_operands_product(self):
        import fp8
        torch.manual_seed(0)
        w = torch.randn(96, 64) * 0.05
        b = torch.randn(96) * 0.02
        x = torch.randn(4, 32, 64, requires_grad=True)
        g = torch.randn(4, 32, 96)
        with ScaledMMCalls() as mm:
            y = fp8.frozen_linear(x, w)
            y.backward(g)
        # Forward and the input's gradient, no weight gradient (Float8Linear
        # runs three products).
        self.assertEqual(mm.calls, 2)
        x2, g2 = x.detach().reshape(-1, 64), g.reshape(-1, 96)
        wq = fp8_rounded(w, fp8.E4M3)
        # Exactly the products of the fp8 values, to fp32's sums.
        torch.testing.assert_close(y.reshape(-1, 96), fp8_rounded(x2, fp8.E4M3) @ wq.t(), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(x.grad.reshape(-1, 64), fp8_rounded(g2, fp8.E5M2) @ wq, rtol=1e-5, atol=1e-6)
        # Against the exact product: within fp8's rounding (e4m3 keeps 3
        # mantissa bits, e5m2 2), the bars FP8Test holds Float8Linear to.
        ref_x = x.detach().clone().requires_grad_()
        ref = torch.nn.functional.linear(ref_x, w)
        ref.backward(g)
        self.assertLess(relative(y, ref), 0.08)
        self.assertLess(relative(x.grad, ref_x.grad), 0.12)
        lin = L.FrozenLinear(torch.nn.Linear(64, 96), fp8=True)
        with torch.no_grad():
            lin.weight.copy_(w)
            lin.bias.copy_(b)
        torch.testing.assert_close(lin(x.detach()), y.detach() + b)

    def test_refuses_a_trained_weight(self):
        import fp8
        with self.assertRaisesRegex(ValueError, "frozen weight"):
            fp8.frozen_linear(torch.randn(2, 8), torch.randn(4, 8, requires_grad=True))

    def test_a_frozen_weight_maximum_is_taken_once(self):
        """A frozen layer keeps its weight's maximum from its first product
        and scales every later one by it, with the products unchanged; a
        trained weight keeps none, and a merge drops the kept one."""
        import fp8
        torch.manual_seed(0)
        lin = L.LoRALinear(torch.nn.Linear(64, 96, bias=False), 4, 8, 0.0, fp8=True)
        x = torch.randn(4, 8, 64)
        first = lin(x)
        kept = lin.w_amax
        self.assertTrue(torch.equal(kept, fp8._amax(lin.weight)))
        self.assertTrue(torch.equal(lin(x), first))
        self.assertIs(lin.w_amax, kept)
        L.merge_into_base(lin)
        self.assertIsNone(lin.w_amax)
        lin.weight.requires_grad_(True)
        self.assertIsNone(lin._weight_amax(x))
        self.assertIsNone(lin.w_amax)

    def test_lora_trains_adapters_and_leaves_the_base(self):
        """A few AdamW steps of LoRA over an fp8 base: the base weights end
        as they started, bit for bit, without gradients; every block product
        runs at most twice a step (forward, input gradient), none for a
        weight gradient, the adapted layers' and the others' alike."""
        a = dataclasses.replace(ModelTest.args, qkv_bias=True)
        m = M.Transformer(a)
        spec = C.LoRAConfig(rank=4, alpha=8, targets=["q", "v_proj", "down"], dropout=0.0)
        self.assertEqual(L.add_adapters(m, spec, fp8=True), 3 * a.layers)
        self.assertEqual(sum(isinstance(x, L.FrozenLinear) for x in m.modules()), 7 * a.layers)
        M.init_full(m, 1, "cpu")
        tokens = torch.from_numpy(np.stack(markov_docs(512, 8, 65, 4))).long()
        # The first layer's q, k and v take the frozen embedding's output,
        # whose gradient nothing needs: autograd runs no backward for their
        # base products.
        self.assertEqual(train_adapters_alone(self, m, tokens, 8), [2 * 7 * a.layers - 3] * 8)


def train_adapters_alone(test, m, tokens, steps):
    """steps AdamW steps of m's trainable parameters on tokens: only the
    adapters get gradients, the loss falls, and every other weight and
    bias ends as it started, bit for bit. Returns each step's
    torch._scaled_mm calls."""
    base = {k: v.clone() for k, v in m.state_dict().items() if not L.is_adapter(k)}
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-2)
    losses, calls = [], []
    for _ in range(steps):
        with ScaledMMCalls() as mm:
            loss = parallel.cross_entropy(m(tokens[:, :-1]), tokens[:, 1:])
            loss.backward()
        calls.append(mm.calls)
        for k, p in m.named_parameters():
            test.assertEqual(p.grad is not None, L.is_adapter(k), k)
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    test.assertLess(losses[-1], losses[0])
    for k, v in m.state_dict().items():
        if not L.is_adapter(k):
            test.assertTrue(torch.equal(v, base[k]), k)
    return calls


@unittest.skipUnless(GPU and torch.cuda.get_device_capability() >= (8, 9), "fp8 needs compute capability 8.9")
class FP8Test(unittest.TestCase):
    def test_products_close_to_bf16(self):
        import fp8
        torch.manual_seed(0)
        lin = fp8.Float8Linear(1024, 2048, bias=True, device="cuda", dtype=torch.bfloat16)
        x = torch.randn(4, 256, 1024, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        y = lin(x)
        ref_x = x.detach().clone().requires_grad_()
        ref_w = lin.weight.detach().clone().requires_grad_()
        ref_b = lin.bias.detach().clone().requires_grad_()
        ref = torch.nn.functional.linear(ref_x, ref_w, ref_b)
        g = torch.randn_like(y)
        y.backward(g)
        ref.backward(g)
        rel = lambda a, b: ((a.float() - b.float()).norm() / b.float().norm()).item()  # noqa: E731
        self.assertLess(rel(y, ref), 0.08)
        self.assertLess(rel(x.grad, ref_x.grad), 0.12)
        # The weight's gradient: its product's operands transposed and scaled right.
        self.assertLess(rel(lin.weight.grad, ref_w.grad), 0.12)
        # The bias is added after the product, in the compute precision.
        self.assertLess(rel(lin.bias.grad, ref_b.grad), 0.01)


class PreflightTest(unittest.TestCase):
    def report(self, ours, theirs):
        rep = {"nccl": ours, "system_nccl": theirs, "system_nccl_path": "/usr/lib/libnccl.so.2", "problems": [], "warnings": []}
        P.compare_nccl(rep)
        return rep

    def test_nccl_versions(self):
        self.assertEqual(self.report("2.28.9", "2.28.9")["warnings"], [])
        self.assertEqual(len(self.report("2.28.9", "2.28.3")["warnings"]), 1)
        self.assertEqual(self.report("2.27.5", "2.28.3")["problems"][0]["summary"], "NCCL versions differ")
        self.assertEqual(self.report("2.28.9", None)["problems"], [])

    def test_reports_this_machine(self):
        rep = P.check(1, "bf16")
        self.assertIn("torch", rep)
        if GPU:
            self.assertEqual(rep["problems"], [], rep)
            self.assertTrue(rep["nccl"])


class ReportTest(unittest.TestCase):
    def test_non_finite_numbers_are_null(self):
        import io
        buf = io.StringIO()
        R.Reporter(True, buf).emit("step", loss=float("nan"), mfu=0.5)
        self.assertEqual(json.loads(buf.getvalue()), {"event": "step", "loss": None, "mfu": 0.5})

    def test_throughput_skips_warmup(self):
        t = R.Throughput(2, 1000, 6.0, 100.0, 2)
        for s in (30.0, 2.0, 1.0, 1.0):
            t.add(s)
        self.assertEqual(t.tokens_per_s(), 1000.0)
        self.assertAlmostEqual(t.mfu(), 1000 * 6 / 200)


class ExportTypeTest(unittest.TestCase):
    """The export's storage type, read when the trainer starts (before any
    process group): the source folder's config.json's, else its weights'
    as stored; a folder that tells neither, or names a type an export
    cannot write, fails then, naming the folder."""

    def trainer(self, hf_config, weights=None):
        """A trainer maker for the tiny run with export_hf set, its model
        from a Llama folder of hf_config and, when given, weights."""
        import train as T
        from report import Reporter
        folder = tempfile.mkdtemp()
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(dict(hf_config, architectures=["LlamaForCausalLM"]), f)
        if weights is not None:
            from safetensors.torch import save_file
            save_file({"model.embed_tokens.weight": weights}, os.path.join(folder, "model.safetensors"))
        cfg = C.load(os.path.join(TESTDATA, "pretrain.json"))
        cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, hf=folder), export_hf=folder + "-export")
        return folder, lambda: T.Trainer(cfg, Reporter(False))

    def test_the_folder_tells_the_type(self):
        cases = {"dtype": ({"dtype": "float16"}, None, "float16"), "torch_dtype": ({"torch_dtype": "float32"}, None, "float32"),
                 "stored": ({}, torch.zeros(2, 2, dtype=torch.bfloat16), "bfloat16")}
        for name, (hf, weights, want) in cases.items():
            with self.subTest(name):
                _, make = self.trainer(hf, weights)
                self.assertEqual(make().export_dtype, want)

    def test_a_folder_that_cannot_tell_fails_at_start(self):
        from report import TrainerError
        for name, hf in {"no type, no weights": {}, "a type no export writes": {"dtype": "float8_e4m3fn"}}.items():
            with self.subTest(name):
                folder, make = self.trainer(hf)
                with self.assertRaises(TrainerError) as caught:
                    make()
                self.assertEqual(caught.exception.summary, "Export type unknown")
                self.assertIn(folder, caught.exception.detail)


def torchrun(config, nproc=1):
    """Runs the trainer under torchrun; returns its JSON events."""
    folder = os.path.dirname(config["checkpoint_dir"])
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"config-{len(os.listdir(folder))}.json")
    with open(path, "w") as f:
        json.dump(config, f)
    return launch("train.py", path, nproc, timeout=600)


def launch(script, path, nproc, timeout):
    """The trainer's script (train.py, evaluate.py) under torchrun on nproc
    ranks with the config.json at path; its JSON events."""
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", f"--nproc-per-node={nproc}",
                          os.path.join(TRAINER, script), "--config", path], capture_output=True, text=True, timeout=timeout)
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0:
        raise AssertionError(f"{script} failed ({out.returncode}): {out.stderr[-3000:]}\n{events[-3:]}")
    return events


def tiny_config(work, **over):
    """The tiny model's pretrain run as plugins/train writes it, with its
    data and checkpoints in work."""
    cfg = written("pretrain.json")
    cfg.update(data=[work + "/data"], checkpoint_dir=work + "/ckpt")
    cfg.update(over)
    return cfg


def valid_events(events):
    return {e["step"]: e["valid_loss"] for e in events if e["event"] == "valid"}


class ValidationLayoutsTest(unittest.TestCase):
    """The validation loss of the same two steps under each layout, on CPU
    ranks over gloo: data parallelism averages over replicas, tensor
    parallelism counts each replica once, a pipeline's last stage computes
    it from activations passed through every stage."""

    def test_every_layout_validates_alike(self):
        from concurrent.futures import ThreadPoolExecutor
        work = tempfile.mkdtemp()
        docs = markov_docs(512, 48, 400, 2)
        write_shard(work + "/data", docs[:40])
        write_shard(work + "/valid", docs[40:])
        layouts = {"single": {}, "dp2": {"dp": 2}, "tp2": {"tp": 2}, "pp2": {"pp": 2}}

        def run(name):
            cfg = tiny_config(work, device="cpu", steps=2, checkpoint=False, checkpoint_dir=f"{work}/{name}/ckpt",
                              valid_data=[work + "/valid"], eval_every=1, eval_batches=2)
            cfg["layout"] = dict(cfg["layout"], **layouts[name])
            return torchrun(cfg, nproc=max(cfg["layout"][k] for k in ("tp", "pp", "dp")))

        with ThreadPoolExecutor(len(layouts)) as pool:
            events = dict(zip(layouts, pool.map(run, layouts)))
        want = valid_events(events["single"])
        self.assertEqual(sorted(want), [1, 2])
        self.assertTrue(4.0 < want[1] < 7.0, want)  # near ln(512) = 6.24 after one step
        for name, evs in events.items():
            got = valid_events(evs)
            self.assertEqual(sorted(got), [1, 2], name)
            for step in got:
                self.assertAlmostEqual(got[step], want[step], delta=1e-3 * want[step], msg=f"{name} at step {step}")
            result = next(e["result"] for e in evs if e["event"] == "result")
            self.assertEqual(result["valid_loss"], got[2], name)
            self.assertAlmostEqual(result["valid_perplexity"], math.exp(got[2]), delta=1e-6 * result["valid_perplexity"])


class UnevenPipelineTest(unittest.TestCase):
    """A pipeline whose stages hold different numbers of layers trains as
    one rank does, on CPU ranks over gloo: six layers on two stages, one
    and five (first_stage_layers = 1), five and one (last_stage_layers =
    1), and two and four interleaved over vp = 2 (chunks of 1, 2, 1, 2
    layers). A five-layer model departs from the six-layer one beyond the
    tolerance, so the comparison tells the depth apart."""

    def test_uneven_stages_train_alike(self):
        from concurrent.futures import ThreadPoolExecutor
        work = tempfile.mkdtemp()
        write_shard(work + "/data", markov_docs(512, 40, 400, 4))
        layouts = {"single": (6, {}), "pp2-1+5": (6, {"pp": 2, "first_stage_layers": 1}),
                   "pp2-5+1": (6, {"pp": 2, "last_stage_layers": 1}),
                   "pp2-vp2-2+4": (6, {"pp": 2, "vp": 2, "first_stage_layers": 2}), "five layers": (5, {})}

        def run(name):
            layers, layout = layouts[name]
            cfg = tiny_config(work, device="cpu", steps=3, checkpoint=False, checkpoint_dir=f"{work}/{name}/ckpt")
            cfg["model"] = dict(cfg["model"], layers=layers)
            cfg["layout"] = dict(cfg["layout"], **layout)
            events = torchrun(cfg, nproc=layout.get("pp", 1))
            return {e["step"]: e["loss"] for e in events if e["event"] == "step"}

        with ThreadPoolExecutor(len(layouts)) as pool:
            losses = dict(zip(layouts, pool.map(run, layouts)))
        want = losses.pop("single")
        control = losses.pop("five layers")
        self.assertEqual(sorted(want), [1, 2, 3])
        departure = max(abs(control[k] - want[k]) / want[k] for k in want)
        self.assertGreater(departure, 1e-3, (control, want))
        for name, got in losses.items():
            self.assertEqual(sorted(got), [1, 2, 3], name)
            for step in got:
                self.assertAlmostEqual(got[step], want[step], delta=1e-3 * want[step], msg=f"{name} at step {step}")


class FP8OnCPURanksTest(unittest.TestCase):
    """fp8 on CPU ranks: torch._scaled_mm's CPU kernel runs the blocks'
    products, so an fp8 layout trains there, one rank or tp2, and its loss
    follows fp32's within fp8's rounding."""

    def test_fp8_trains_on_cpu_ranks(self):
        from concurrent.futures import ThreadPoolExecutor
        work = tempfile.mkdtemp()
        write_shard(work + "/data", markov_docs(512, 40, 400, 2))
        runs = {"fp32": ("bf16", {}), "fp8": ("fp8", {}), "fp8.tp2": ("fp8", {"tp": 2})}

        def run(name):
            precision, layout = runs[name]
            cfg = tiny_config(work, device="cpu", steps=3, checkpoint=False, checkpoint_dir=f"{work}/{name}/ckpt")
            cfg["layout"] = dict(cfg["layout"], precision=precision, **layout)
            events = torchrun(cfg, nproc=layout.get("tp", 1))
            return {e["step"]: e["loss"] for e in events if e["event"] == "step"}

        with ThreadPoolExecutor(len(runs)) as pool:
            losses = dict(zip(runs, pool.map(run, runs)))
        for name in ("fp8", "fp8.tp2"):
            self.assertEqual(sorted(losses[name]), [1, 2, 3], name)
            for step, want in losses["fp32"].items():
                # e4m3 keeps 3 mantissa bits: a relative rounding of up to
                # 6% per element, mostly averaged away over the products' sums.
                self.assertAlmostEqual(losses[name][step], want, delta=0.02 * want, msg=f"{name} at step {step}")
        for step, want in losses["fp8"].items():
            self.assertAlmostEqual(losses["fp8.tp2"][step], want, delta=1e-3 * want, msg=f"fp8.tp2 at step {step}")


class SlidingWindowLayoutsTest(unittest.TestCase):
    """A Mistral folder's sliding window (16 tokens, seq_len 64) under
    tensor parallelism (heads split, with and without sequence
    parallelism) and a pipeline, on CPU ranks: each
    layout validates as one rank does, and differently from the same
    model without a window."""

    def test_layouts_validate_alike(self):
        from concurrent.futures import ThreadPoolExecutor
        work = tempfile.mkdtemp()
        docs = markov_docs(512, 48, 400, 3)
        write_shard(work + "/data", docs[:40])
        write_shard(work + "/valid", docs[40:])
        base = written("pretrain.json")["model"]
        for name, window in (("mistral", 16), ("llama", None)):
            os.makedirs(f"{work}/{name}")
            with open(f"{work}/{name}/config.json", "w") as f:
                json.dump({"architectures": ["MistralForCausalLM"], "sliding_window": window, "rope_theta": 10000.0,
                           "rms_norm_eps": 1e-5, "tie_word_embeddings": False}, f)
        runs = {"single": ("mistral", {}), "tp2": ("mistral", {"tp": 2}), "pp2": ("mistral", {"pp": 2}),
                "tp2-sp": ("mistral", {"tp": 2, "sequence_parallel": True}), "unwindowed": ("llama", {})}

        def run(name):
            folder, layout = runs[name]
            cfg = tiny_config(work, device="cpu", steps=2, checkpoint=False, checkpoint_dir=f"{work}/{name}/ckpt",
                              valid_data=[work + "/valid"], eval_every=1, eval_batches=2)
            cfg["model"] = dict(base, hf=f"{work}/{folder}", architecture="MistralForCausalLM")
            cfg["layout"] = dict(cfg["layout"], **layout)
            return torchrun(cfg, nproc=max(cfg["layout"][k] for k in ("tp", "pp", "dp")))

        with ThreadPoolExecutor(len(runs)) as pool:
            events = dict(zip(runs, pool.map(run, runs)))
        want = valid_events(events["single"])
        for name in ("tp2", "pp2", "tp2-sp"):
            got = valid_events(events[name])
            self.assertEqual(sorted(got), [1, 2], name)
            for step in got:
                self.assertAlmostEqual(got[step], want[step], delta=1e-3 * want[step], msg=f"{name} at step {step}")
        self.assertGreater(abs(valid_events(events["unwindowed"])[2] - want[2]), 1e-4)


def has_tensorboard():
    import importlib.util
    return importlib.util.find_spec("tensorboard") is not None


@unittest.skipUnless(GPU, "needs a GPU")
class EndToEndTest(unittest.TestCase):
    """One GPU, through torchrun: checkpoints, resume, LoRA and merge."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp()
        write_shard(cls.work + "/data", markov_docs(512, 40, 400, 2))
        cls.straight = torchrun(tiny_config(cls.work, checkpoint_dir=cls.work + "/straight/ckpt"))

    def losses(self, events):
        return {e["step"]: e["loss"] for e in events if e["event"] == "step"}

    def test_resume_continues_the_same_run(self):
        first = torchrun(tiny_config(self.work, steps=6, checkpoint_dir=self.work + "/resume/ckpt"))
        ckpt = next(e["path"] for e in first if e["event"] == "checkpoint" and e["step"] == 3)
        again = torchrun(tiny_config(self.work, checkpoint_dir=self.work + "/resume/ckpt", resume_from=ckpt))
        want, got = self.losses(self.straight), self.losses(again)
        self.assertEqual(sorted(got), [4, 5, 6])
        for step in got:
            self.assertAlmostEqual(got[step], want[step], delta=2e-3 * want[step])
        result = next(e["result"] for e in again if e["event"] == "result")
        self.assertEqual(result["resumed_from_step"], 3)
        self.assertTrue(os.path.exists(os.path.join(result["checkpoint"], "gpuflow.json")))

    def test_fp16_tracks_bf16_and_resumes_its_scale(self):
        def run(name, **over):
            return torchrun(tiny_config(self.work, checkpoint_dir=f"{self.work}/{name}/ckpt", **over))

        layout = dict(written("pretrain.json")["layout"], precision="fp16")
        half = run("fp16", layout=layout)
        want, got = self.losses(self.straight), self.losses(half)
        self.assertEqual(sorted(got), sorted(want))
        for step in got:
            self.assertAlmostEqual(got[step], want[step], delta=0.02 * want[step], msg=f"fp16 against bf16 at step {step}")
        self.assertLess(got[6], got[1])
        steps = [e for e in half if e["event"] == "step"]
        # The tiny model's scaled gradients stay far inside fp16's range, and
        # its 6 steps are far fewer than the growth interval: no step is
        # skipped, and every step runs at the starting scale.
        self.assertEqual({(e["loss_scale"], e["skipped_steps"]) for e in steps}, {(LS.INIT_SCALE, 0)}, steps)
        result = next(e["result"] for e in half if e["event"] == "result")
        self.assertEqual(result["skipped_steps"], steps[-1]["skipped_steps"])
        ckpt = next(e["path"] for e in half if e["event"] == "checkpoint" and e["step"] == 3)
        with open(os.path.join(ckpt, "gpuflow.json")) as f:
            saved = json.load(f)["loss_scale"]
        self.assertEqual(saved["scale"], steps[3]["loss_scale"], "the checkpoint holds the scale step 4 used")
        again = torchrun(tiny_config(self.work, checkpoint_dir=f"{self.work}/fp16/ckpt", resume_from=ckpt, layout=layout))
        resumed = {e["step"]: e for e in again if e["event"] == "step"}
        self.assertEqual(sorted(resumed), [4, 5, 6])
        for e in steps[3:]:
            self.assertAlmostEqual(resumed[e["step"]]["loss"], e["loss"], delta=2e-3 * e["loss"])
            self.assertEqual((resumed[e["step"]]["loss_scale"], resumed[e["step"]]["skipped_steps"]), (e["loss_scale"], e["skipped_steps"]))
        self.assertNotIn("loss_scale", next(e["result"] for e in self.straight if e["event"] == "result"), "bf16 has no loss scale")

    def test_loss_falls_and_results_are_reported(self):
        losses = self.losses(self.straight)
        self.assertLess(losses[6], losses[1])
        result = next(e["result"] for e in self.straight if e["event"] == "result")
        for key in ("final_loss", "tokens_per_s", "mfu", "peak_memory_bytes", "peak_allocated_bytes"):
            self.assertGreater(result[key], 0, key)
        self.assertEqual(len(result["peak_memory_bytes_per_rank"]), 1)
        kept = sorted(os.listdir(self.work + "/straight/ckpt"))
        self.assertEqual(kept, ["step-00000003", "step-00000006"])

    def test_lora_on_the_pretrained_checkpoint(self):
        # New data (another transition table), as a fine-tune has: on the
        # pre-training data the later steps would meet batches pre-training
        # never saw, and the loss would drift up however well LoRA learned.
        base = next(e["result"]["checkpoint"] for e in self.straight if e["event"] == "result")
        write_shard(self.work + "/tune", markov_docs(512, 40, 400, 7))
        events = torchrun(tiny_config(self.work, stage="finetune.test", type="finetune", base=base, merge=True, lr=2e-3, steps=12,
                                      data=[self.work + "/tune"], checkpoint_dir=self.work + "/lora/ckpt",
                                      lora={"rank": 8, "alpha": 16, "targets": ["q_proj", "v_proj"], "dropout": 0.0}))
        losses = self.losses(events)
        first, last = [losses[s] for s in (1, 2, 3)], [losses[s] for s in (10, 11, 12)]
        self.assertLess(sum(last), sum(first), losses)
        result = next(e["result"] for e in events if e["event"] == "result")
        self.assertTrue(result["adapters"].endswith("adapters.safetensors") and os.path.exists(result["adapters"]))
        self.assertTrue(os.path.exists(os.path.join(result["merged"], "gpuflow.json")))
        from safetensors.torch import load_file
        self.assertTrue(all(L.is_adapter(k) for k in load_file(result["adapters"])))

    @unittest.skipUnless(torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9), "fp8 needs compute capability 8.9")
    def test_fp8_lora_tracks_bf16_lora(self):
        """LoRA over the fp8 base against LoRA over the bf16 base, from the
        same checkpoint on the same data: the loss within FP8_LORA_TOLERANCE
        at every step, falling, and the same adapters files (names, shapes,
        PEFT's folder)."""
        from safetensors.torch import load_file
        base = next(e["result"]["checkpoint"] for e in self.straight if e["event"] == "result")
        write_shard(self.work + "/tune8", markov_docs(512, 40, 400, 8))
        runs = {}
        for precision in ("bf16", "fp8"):
            cfg = tiny_config(self.work, stage="finetune.test", type="finetune", base=base, lr=2e-3, steps=12,
                              data=[self.work + "/tune8"], checkpoint_dir=f"{self.work}/lora-{precision}/ckpt",
                              export_peft=f"{self.work}/lora-{precision}/peft",
                              lora={"rank": 8, "alpha": 16, "targets": ["q_proj", "v_proj"], "dropout": 0.0})
            cfg["layout"] = dict(cfg["layout"], precision=precision)
            runs[precision] = torchrun(cfg)
        bf16, fp8 = self.losses(runs["bf16"]), self.losses(runs["fp8"])
        worst = max(abs(fp8[s] - bf16[s]) / bf16[s] for s in bf16)
        print(f"fp8 LoRA against bf16 LoRA: largest relative loss difference {worst:.2e} over {len(bf16)} steps")
        self.assertEqual(sorted(fp8), sorted(bf16))
        self.assertLessEqual(worst, FP8_LORA_TOLERANCE, (bf16, fp8))
        self.assertLess(sum(fp8[s] for s in (10, 11, 12)), sum(fp8[s] for s in (1, 2, 3)), fp8)
        shapes = {}
        for precision, events in runs.items():
            result = next(e["result"] for e in events if e["event"] == "result")
            peft = f"{self.work}/lora-{precision}/peft.partial"
            tensors = {k: tuple(v.shape) for f in sorted(os.listdir(peft)) if f.endswith(".safetensors")
                       for k, v in load_file(os.path.join(peft, f)).items()}
            own = {k: tuple(v.shape) for k, v in load_file(result["adapters"]).items()}
            shapes[precision] = (own, tensors, sorted(os.listdir(peft)))
        self.assertTrue(shapes["bf16"][0])
        self.assertEqual(shapes["fp8"], shapes["bf16"])

    @unittest.skipUnless(has_tensorboard(), "needs the tensorboard package to read the event files back")
    def test_validation_and_tensorboard(self):
        # Held-out documents of the same Markov chain as the training data.
        write_shard(self.work + "/valid", markov_docs(512, 48, 400, 2)[40:])
        board = self.work + "/board"
        events = torchrun(tiny_config(self.work, checkpoint_dir=self.work + "/validated/ckpt", valid_data=[self.work + "/valid"],
                                      eval_every=2, tensorboard_dir=board))
        valid = valid_events(events)
        self.assertEqual(sorted(valid), [2, 4, 6])
        self.assertLess(valid[6], valid[2])
        result = next(e["result"] for e in events if e["event"] == "result")
        self.assertEqual(result["valid_loss"], valid[6])
        self.assertAlmostEqual(result["valid_perplexity"], math.exp(valid[6]), delta=1e-6 * result["valid_perplexity"])

        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
        acc = EventAccumulator(board)
        acc.Reload()
        tags = set(acc.Tags()["scalars"])
        for tag in ("train/loss", "train/lr", "train/tokens_per_s", "train/mfu", "train/memory_bytes", "valid/loss", "valid/perplexity"):
            self.assertIn(tag, tags)
        read = lambda tag: {e.step: e.value for e in acc.Scalars(tag)}
        for step, loss in self.losses(events).items():
            self.assertAlmostEqual(read("train/loss")[step], loss, delta=1e-5 * loss)
        self.assertEqual(sorted(read("valid/loss")), [2, 4, 6])
        for step, loss in valid.items():
            self.assertAlmostEqual(read("valid/loss")[step], loss, delta=1e-5 * loss)


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(GPU, "needs a GPU")
class MaskedRunTest(unittest.TestCase):
    """A run on masked data, through torchrun: the replies follow a rule the
    prompts do not, and the loss, reported over the replies only, falls."""

    def test_loss_over_replies_falls(self):
        work = tempfile.mkdtemp()
        prompts = markov_docs(512, 40, 200, 11)
        replies = markov_docs(512, 40, 200, 12)
        write_shard(work + "/chat", [np.concatenate([p, r]) for p, r in zip(prompts, replies)])
        write_shard(work + "/chat.mask", [np.repeat([0, 1], [200, 200]) for _ in prompts], np.uint8, 1)
        events = torchrun(tiny_config(work, data=[work + "/chat"], masks=[work + "/chat.mask"], steps=12, checkpoint_dir=work + "/ckpt"))
        losses = {e["step"]: e["loss"] for e in events if e["event"] == "step"}
        self.assertLess(sum(losses[s] for s in (10, 11, 12)), sum(losses[s] for s in (1, 2, 3)), losses)
