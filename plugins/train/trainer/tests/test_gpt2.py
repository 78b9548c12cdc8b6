"""GPT-2 (activation "gelu") in the trainer: the model against gpuflow's
counts, its pipeline stages, recomputation, LoRA and fp8 on it (LoRA over
an fp8 base too), its learned positions from a start, its Hugging Face
key map and PEFT adapters, and runs through torchrun on CPU ranks under
every layout (fp16's loss scaling and LoRA over an fp8 base among them)
against one process. They need PyTorch; run
from the repository root:

  python3 -m unittest discover -s plugins/train/trainer/tests -p test_gpt2.py -v
"""

import copy
import dataclasses
import math
import os
import sys
import tempfile
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import config as C  # noqa: E402
import lora as L  # noqa: E402
import model as M  # noqa: E402
from models import gpt2  # noqa: E402
from test_trainer import (GPU, TESTDATA, assert_lora_starts_at_the_base_and_merges,  # noqa: E402
                          assert_recomputation_keeps_gradients, markov_docs, torchrun, train_adapters_alone, write_shard,
                          written)

ARGS = M.ModelArgs.from_config(C.load(os.path.join(TESTDATA, "gpt2.json")).model)
# Loss agreement of a layout with one process, relative, per step: CPU
# ranks compute in fp32 and differ only in the order of their sums.
LAYOUT_TOL = 1e-3


def initialised(args=ARGS, seed=1):
    m = M.Transformer(args)
    M.init_full(m, seed, "cpu")
    return m


def tokens(n=2, seed=1, length=None):
    return torch.randint(0, ARGS.vocab, (n, length or ARGS.seq_len), generator=torch.Generator().manual_seed(seed))


class GPT2ModelTest(unittest.TestCase):
    def test_gpuflows_counts_are_the_models(self):
        for name in ("gpt2.json", "gpt2_lora.json"):
            with self.subTest(name):
                cfg = C.load(os.path.join(TESTDATA, name))
                m = M.Transformer(M.ModelArgs.from_config(cfg.model))
                self.assertEqual(sum(p.numel() for p in m.parameters()), cfg.params)
                if cfg.lora:
                    self.assertEqual(L.add_adapters(m, cfg.lora), 6 * cfg.model.layers, "q, k, v, o, up and down: no gate")
                    self.assertEqual(sum(p.numel() for p in m.parameters() if p.requires_grad), cfg.adapter_params)

    def test_is_gpt2s_architecture(self):
        m = M.Transformer(ARGS)
        block = m.layers["0"]
        self.assertIsInstance(block.attention_norm, torch.nn.LayerNorm)
        self.assertEqual(block.attention_norm.eps, 1e-5)
        self.assertEqual(sorted(n for n, _ in block.feed_forward.named_children()), ["down_proj", "up_proj"])
        self.assertTrue(all(getattr(block.attention, n).bias is not None for n in ("q_proj", "k_proj", "v_proj", "o_proj")))
        self.assertEqual(tuple(m.pos_embeddings.weight.shape), (ARGS.seq_len, ARGS.hidden))
        self.assertIsNone(m.output, "tied")
        self.assertIsNone(m.rope)

    def test_initial_loss_is_uniform(self):
        x = tokens(length=ARGS.seq_len + 1)
        loss = torch.nn.functional.cross_entropy(initialised()(x[:, :-1]).flatten(0, 1), x[:, 1:].flatten())
        self.assertLess(abs(loss.item() - math.log(ARGS.vocab)), 0.1)

    def test_pipeline_stages_chain_to_the_whole_model(self):
        whole = initialised(seed=5)
        first, last = M.keep_stage(copy.deepcopy(whole), 0, 2), M.keep_stage(copy.deepcopy(whole), 1, 2)
        self.assertIsNotNone(first.pos_embeddings)
        self.assertIsNone(last.pos_embeddings, "positions live on the first stage with the token embedding")
        self.assertTrue(torch.equal(last.tok_embeddings.weight, first.tok_embeddings.weight), "the tied copy")
        x = tokens()
        torch.testing.assert_close(last(first(x)), whole(x))
        for stage in range(2):
            part = M.keep_stage(M.Transformer(ARGS), stage, 2)
            M.init_full(part, 5, "cpu")
            for k, v in part.state_dict().items():
                self.assertTrue(torch.equal(v, whole.state_dict()[k]), k)

    def test_recomputation_keeps_gradients(self):
        assert_recomputation_keeps_gradients(ARGS, tokens(length=ARGS.seq_len + 1))

    def test_lora_starts_at_the_base_and_merges_exactly(self):
        spec = C.LoRAConfig(rank=4, alpha=8, targets=["all-linear"], dropout=0.0)
        self.assertEqual(assert_lora_starts_at_the_base_and_merges(self, ARGS, spec, tokens()), 6 * ARGS.layers)

    def test_fp8_keeps_the_biases(self):
        import fp8
        with torch.device("meta"):
            m = M.Transformer(ARGS)
            before = {n: tuple(p.shape) for n, p in m.named_parameters()}
            self.assertEqual(fp8.convert(m), 6 * ARGS.layers)
        self.assertEqual({n: tuple(p.shape) for n, p in m.named_parameters()}, before)

    def test_lora_over_an_fp8_base_keeps_the_biases_frozen(self):
        """LoRA over an fp8 base (lora.FrozenLinear): the adapted layers
        and the others keep their biases and add them (with biases off
        zero the logits follow the fp32 model's within fp8's rounding),
        and a few AdamW steps leave every base weight and bias as it
        started, bit for bit, without gradients."""
        spec = C.LoRAConfig(rank=4, alpha=8, targets=["q", "up_proj"], dropout=0.0)
        m, plain = M.Transformer(ARGS), M.Transformer(ARGS)
        self.assertEqual(L.add_adapters(m, spec, fp8=True), 2 * ARGS.layers)
        L.add_adapters(plain, spec)
        frozen = [x for x in m.modules() if isinstance(x, L.FrozenLinear)]
        self.assertEqual(len(frozen), 6 * ARGS.layers, "every linear of the blocks")
        self.assertTrue(all(x.bias is not None for x in frozen))
        M.init_full(m, 1, "cpu")
        with torch.no_grad():
            for k, p in m.named_parameters():
                if k.endswith(".bias"):
                    p.normal_(0, 0.5, generator=torch.Generator().manual_seed(len(k)))
        plain.load_state_dict(m.state_dict())
        x = tokens(length=ARGS.seq_len + 1)
        with torch.no_grad():
            got, want = m(x[:, :-1]), plain(x[:, :-1])
        # fp8's rounding moves the logits by a few percent; a bias left out
        # (0.5 on each of its outputs) by tens of percent.
        self.assertLess(((got - want).norm() / want.norm()).item(), 0.1)
        train_adapters_alone(self, m, x, 6)

    def test_positions_start_where_they_are_told(self):
        """Without a rotary table the model has no band to build (GPT-2's
        layers have no window) and its learned positions begin at start, as
        generation with a key-value cache needs."""
        m = initialised()
        x = tokens(length=5)
        self.assertEqual(m.bands(x), {})
        with torch.no_grad():
            torch.testing.assert_close(m.embed(x, start=7), m.tok_embeddings(x) + m.pos_embeddings.weight[7:12])


class GPT2HuggingFaceTest(unittest.TestCase):
    """The trainer's GPT-2 written under transformers' names (fused c_attn,
    Conv1D [in, out]) and read back, in one gloo process."""

    @classmethod
    def setUpClass(cls):
        import torch.distributed as dist
        if not dist.is_initialized():
            dist.init_process_group("gloo", init_method=f"file://{tempfile.mkdtemp()}/store", rank=0, world_size=1)

    def test_export_then_load_is_the_same_model(self):
        import hf
        from safetensors import safe_open
        m = initialised(dataclasses.replace(ARGS, tied_embeddings=False), seed=3)
        folder = tempfile.mkdtemp() + "/out"
        hf.export_model(folder, [m], gpt2.to_hf, lambda k: True, "float32", True, 0)
        tmp = folder + hf.PARTIAL
        files = [f for f in os.listdir(tmp) if f.endswith(".safetensors")]
        with safe_open(os.path.join(tmp, files[0]), framework="pt") as f:
            keys = set(f.keys())
            c_attn = f.get_tensor("transformer.h.1.attn.c_attn.weight")
            c_fc = f.get_tensor("transformer.h.1.mlp.c_fc.weight")
        h, a = ARGS.hidden, m.layers["1"].attention
        self.assertIn("transformer.wpe.weight", keys)
        self.assertIn("lm_head.weight", keys)
        self.assertEqual(len(keys), 5 + 12 * ARGS.layers)
        self.assertTrue(torch.equal(c_attn, torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]).t()))
        self.assertEqual(tuple(c_attn.shape), (h, 3 * h))
        self.assertTrue(torch.equal(c_fc, m.layers["1"].feed_forward.up_proj.weight.t()))
        os.rename(os.path.join(tmp, files[0]), os.path.join(tmp, "model.safetensors"))
        back = M.Transformer(dataclasses.replace(ARGS, tied_embeddings=False))
        hf.load(tmp, [back], gpt2.to_hf, lambda k: True)
        want = m.state_dict()
        for k, v in back.state_dict().items():
            self.assertTrue(torch.equal(v, want[k]), k)
        # Public GPT-2's config.json names no type: the export keeps the
        # tensors' own.
        self.assertEqual(hf.stored_dtype(tmp), "float32")

    def test_fused_peft_adapter_is_the_three(self):
        """q and v adapted, k not: PEFT's one c_attn adapter, scaled by
        alpha_pattern / rank_pattern (2 alpha / 2 r), adds to c_attn what
        the two add to q and v."""
        r, alpha, h = 4, 8.0, ARGS.hidden
        g = torch.Generator().manual_seed(4)
        ab = {m: (torch.randn(r, h, generator=g), torch.randn(h, r, generator=g)) for m in ("q_proj", "v_proj")}
        adapters = {}
        for m, (a, b) in ab.items():
            adapters[f"layers.0.attention.{m}.lora_a.weight"], adapters[f"layers.0.attention.{m}.lora_b.weight"] = a, b
        out = gpt2.peft_tensors(adapters)
        prefix = "base_model.model.transformer.h.0.attn.c_attn."
        self.assertEqual(sorted(out), [prefix + "lora_A.weight", prefix + "lora_B.weight"])
        fused = out[prefix + "lora_B.weight"] @ out[prefix + "lora_A.weight"] * ((2 * alpha) / (2 * r))
        each = {m: b @ a * (alpha / r) for m, (a, b) in ab.items()}
        torch.testing.assert_close(fused, torch.cat([each["q_proj"], torch.zeros(h, h), each["v_proj"]]))

    def test_other_adapters_keep_their_module(self):
        a, b = torch.zeros(2, 8), torch.zeros(8, 2)
        out = gpt2.peft_tensors({"layers.3.feed_forward.down_proj.lora_a.weight": a, "layers.3.feed_forward.down_proj.lora_b.weight": b,
                                 "layers.3.attention.o_proj.lora_a.weight": a, "layers.3.attention.o_proj.lora_b.weight": b})
        self.assertEqual(sorted(out), ["base_model.model.transformer.h.3.attn.c_proj.lora_A.weight",
                                       "base_model.model.transformer.h.3.attn.c_proj.lora_B.weight",
                                       "base_model.model.transformer.h.3.mlp.c_proj.lora_A.weight",
                                       "base_model.model.transformer.h.3.mlp.c_proj.lora_B.weight"])


def losses(events):
    return {e["step"]: e["loss"] for e in events if e["event"] == "step"}


class GPT2LayoutsTest(unittest.TestCase):
    """A tiny tied GPT-2 through torchrun on CPU ranks over gloo, on data
    with loss masks: one process, FSDP2 over two, TP2 with sequence
    parallelism (selective recomputation), PP2 (full recomputation), fp16's
    loss scaling under TP2 and PP2 (in fp32 on CPU ranks, the scaling
    path alone), and LoRA on the one-process checkpoint under one process,
    TP2 and PP2. Every step's loss agrees with one process within
    LAYOUT_TOL; LoRA over an fp8 base as FP8_LORA_LAYOUTS says."""

    LAYOUTS = {"single": {}, "dp2": {"dp": 2, "fsdp": True}, "tp2": {"tp": 2, "sequence_parallel": True, "recompute": "selective"},
               "pp2": {"pp": 2, "recompute": "full"}, "fp16.tp2": {"tp": 2, "sequence_parallel": True, "precision": "fp16"},
               "fp16.pp2": {"pp": 2, "precision": "fp16"}}
    LORA_LAYOUTS = {"single": {}, "tp2": {"tp": 2, "sequence_parallel": True}, "pp2": {"pp": 2}}
    # LoRA over an fp8 base (lora.FrozenLinear, GPT-2's biases on every
    # linear): one rank and tp2, against bf16's within fp8's rounding and
    # against each other within LAYOUT_TOL.
    FP8_LORA_LAYOUTS = {"fp8": {"precision": "fp8"}, "fp8.tp2": {"tp": 2, "precision": "fp8"}}

    @classmethod
    def setUpClass(cls):
        cls.work = work = tempfile.mkdtemp()
        prompts, replies = markov_docs(512, 40, 150, 21), markov_docs(512, 40, 250, 22)
        write_shard(work + "/chat", [np.concatenate([p, r]) for p, r in zip(prompts, replies)])
        write_shard(work + "/chat.mask", [np.repeat([0, 1], [150, 250]) for _ in prompts], np.uint8, 1)
        write_shard(work + "/tune", markov_docs(512, 40, 400, 23))

    def config(self, name, tag, layout, **over):
        cfg = written(name)
        cfg.update(device="cpu", data=[self.work + "/chat"], masks=[self.work + "/chat.mask"], checkpoint=False,
                   checkpoint_dir=f"{self.work}/{cfg['stage']}-{tag}/ckpt")
        cfg.update(over)
        cfg["layout"] = dict(cfg["layout"], **layout)
        return cfg

    def run_all(self, configs):
        from concurrent.futures import ThreadPoolExecutor
        nproc = lambda c: max(c["layout"][k] for k in ("tp", "pp", "dp"))  # noqa: E731
        with ThreadPoolExecutor(len(configs)) as pool:
            return dict(zip(configs, pool.map(lambda c: torchrun(c, nproc=nproc(c)), configs.values())))

    def assert_agree(self, events):
        want = losses(events["single"])
        self.assertEqual(len(want), 6)
        for name, evs in events.items():
            got = losses(evs)
            self.assertEqual(sorted(got), sorted(want), name)
            for step in got:
                self.assertAlmostEqual(got[step], want[step], delta=LAYOUT_TOL * want[step], msg=f"{name} at step {step}")

    def test_every_layout_trains_alike(self):
        events = self.run_all({name: self.config("gpt2.json", name, layout) for name, layout in self.LAYOUTS.items()})
        self.assert_agree(events)
        loss = losses(events["single"])
        self.assertLess(loss[6], loss[1], "the loss falls")

    def test_lora_under_every_layout(self):
        base = torchrun(self.config("gpt2.json", "base", {}, checkpoint=True))
        ckpt = next(e["result"]["checkpoint"] for e in base if e["event"] == "result")
        layouts = dict(self.LORA_LAYOUTS, **self.FP8_LORA_LAYOUTS)
        events = self.run_all({name: self.config("gpt2_lora.json", name, layout, base=ckpt, data=[self.work + "/tune"], masks=[], lr=1e-2)
                               for name, layout in layouts.items()})
        fp8 = {name: losses(events.pop(name)) for name in self.FP8_LORA_LAYOUTS}
        self.assert_agree(events)
        loss = losses(events["single"])
        self.assertLess(sum(loss[s] for s in (4, 5, 6)), sum(loss[s] for s in (1, 2, 3)), loss)
        for step, want in loss.items():
            # e4m3 keeps 3 mantissa bits: a relative rounding of up to 6%
            # per element, mostly averaged away over the products' sums.
            self.assertAlmostEqual(fp8["fp8"][step], want, delta=0.02 * want, msg=f"fp8 at step {step}")
            self.assertAlmostEqual(fp8["fp8.tp2"][step], fp8["fp8"][step], delta=LAYOUT_TOL * want, msg=f"fp8.tp2 at step {step}")


@unittest.skipUnless(GPU, "needs a GPU")
class GPT2GPUTest(unittest.TestCase):
    """One GPU, through torchrun: bf16 (the compute copy), and fp8 where
    the GPU has it; the loss falls in both."""

    def test_loss_falls(self):
        import fp8
        work = tempfile.mkdtemp()
        write_shard(work + "/data", markov_docs(512, 40, 400, 2))
        for precision in ("bf16", "fp8") if fp8.supported(torch.device("cuda")) else ("bf16",):
            with self.subTest(precision):
                cfg = written("gpt2.json")
                cfg.update(data=[work + "/data"], checkpoint_dir=f"{work}/{precision}/ckpt", steps=12)
                cfg["layout"] = dict(cfg["layout"], precision=precision)
                loss = losses(torchrun(cfg))
                self.assertLess(sum(loss[s] for s in (10, 11, 12)), sum(loss[s] for s in (1, 2, 3)), loss)


if __name__ == "__main__":
    unittest.main()
