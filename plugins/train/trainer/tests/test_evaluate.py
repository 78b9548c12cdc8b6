"""The evaluator's tests (evaluate.py): how a choice is windowed and
scored, how the next token is picked, that generation with the key-value
cache picks the tokens generation without it picks, and that prompts
decoded together make the tokens each makes alone, and, where
transformers is installed, an evaluation through torchrun on CPU ranks
(fp32) whose loss, choice scores and greedy completions match
transformers' own on the same model and tokens (a Llama, and a Mistral
whose sliding window is shorter than the prompts), and the same
evaluation with the weights sharded over two CPU ranks (fsdp = true)
against one rank holding them whole, of a model and of LoRA adapters over
it. Run from the repository root:

  python3 -m unittest discover -s plugins/train/trainer/tests -v
"""

import json
import math
import os
import sys
import tempfile
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINER = os.path.dirname(HERE)
sys.path.insert(0, TRAINER)
sys.path.insert(0, HERE)

import evaluate as E  # noqa: E402
import model as M  # noqa: E402
from test_trainer import launch, write_shard  # noqa: E402

try:
    import transformers  # noqa: F401
    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False


class WindowTest(unittest.TestCase):
    def test_the_last_token_is_not_an_input(self):
        self.assertEqual(E.window([1, 2, 3], [4, 5], 16), [1, 2, 3, 4])

    def test_long_contexts_are_cut_from_the_left(self):
        self.assertEqual(E.window(list(range(10)), [10, 11], 4), [7, 8, 9, 10])


class ScoreTest(unittest.TestCase):
    def test_sums_the_continuations_log_probabilities(self):
        logp = torch.log_softmax(torch.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 0.0], [0.0, 0.0, 5.0], [1.0, 1.0, 1.0]]), dim=-1)
        # inputs of length 3: positions 1 and 2 predict the two continuation tokens
        ll, greedy = E.continuation_score(logp, 3, [0, 2])
        self.assertAlmostEqual(ll, float(logp[1, 0] + logp[2, 2]), places=6)
        self.assertTrue(greedy)
        _, greedy = E.continuation_score(logp, 3, [1, 2])
        self.assertFalse(greedy)


class PickTest(unittest.TestCase):
    def test_temperature_zero_is_greedy(self):
        self.assertEqual(E.pick(torch.tensor([0.1, 3.0, 2.9]), 0, 1, torch.Generator().manual_seed(1)), 1)

    def test_a_small_top_p_keeps_only_the_likeliest(self):
        for seed in range(20):
            self.assertEqual(E.pick(torch.tensor([0.0, 2.0, 1.9]), 1.0, 0.01, torch.Generator().manual_seed(seed)), 1)

    def test_sampling_follows_its_seed(self):
        logits = torch.zeros(50)
        a = [E.pick(logits, 1.0, 1.0, torch.Generator().manual_seed(7)) for _ in range(3)]
        b = [E.pick(logits, 1.0, 1.0, torch.Generator().manual_seed(7)) for _ in range(3)]
        self.assertEqual(a, b)
        self.assertGreater(len({E.pick(logits, 1.0, 1.0, torch.Generator().manual_seed(s)) for s in range(20)}), 5)


class KVCacheTest(unittest.TestCase):
    """Greedy generation with the cache against running the whole sequence
    for every new token, on CPU (fp32) and, with a GPU, in fp32 there:
    prompts shorter and longer than the windows, and 20 new tokens that
    carry every sequence past them; and a GPT-2, whose learned positions
    must go on where the cache ends as the rotary table does."""

    ARGS = M.ModelArgs(layers=4, hidden=64, ffn_hidden=128, heads=4, kv_heads=2, vocab=128, seq_len=48)

    def generate(self, m, prompt, new, cached):
        tokens, cache, fed = list(prompt), M.KVCache.for_layers(m.args.layers), 0
        for _ in range(new):
            t = torch.tensor([tokens], device=m.tok_embeddings.weight.device)
            if cached:
                logits = E.forward(m, t[:, fed:], start=fed, cache=cache)
                fed = len(tokens)
            else:
                logits = E.forward(m, t)
            tokens.append(int(logits[0, -1].argmax()))
        return tokens[len(prompt):]

    @torch.no_grad()
    def test_cached_generation_picks_the_same_tokens(self):
        import dataclasses
        models = {"full": self.ARGS, "window 6 in every layer": dataclasses.replace(self.ARGS, window=6, windowed_layers=(0, 1, 2, 3)),
                  "window 5 from layer 2": dataclasses.replace(self.ARGS, window=5, windowed_layers=(2, 3)),
                  "gpt2": M.gpt(dataclasses.replace(self.ARGS, kv_heads=4))}
        runs = [(name, "cpu") for name in models]
        if torch.cuda.is_available():  # compiled flex_attention prefills windows on a GPU
            runs += [("window 5 from layer 2", "cuda"), ("gpt2", "cuda")]
        for name, device in runs:
            a = models[name]
            m = M.Transformer(a)
            M.init_full(m, 2, "cpu")
            with torch.no_grad():  # sharper logits than the initial ones, so ties cannot decide
                for p in m.parameters():
                    p.mul_(4)
                for fqn, p in m.named_parameters():  # GPT-2's biases start at zero: off it, so that each counts
                    if fqn.endswith(".bias"):
                        p.normal_(0, 0.1, generator=torch.Generator().manual_seed(3))
            m = m.to(device).eval()
            m.init_buffers(torch.device(device))
            rng = np.random.default_rng(7)
            for length in (1, 3, 11):
                with self.subTest(model=name, device=device, prompt=length):
                    prompt = rng.integers(0, 128, size=length).tolist()
                    self.assertEqual(self.generate(m, prompt, 20, True), self.generate(m, prompt, 20, False))

    def test_a_windowed_layer_keeps_only_its_window(self):
        import dataclasses
        m = M.Transformer(dataclasses.replace(self.ARGS, window=4, windowed_layers=(1, 2, 3))).eval()
        M.init_full(m, 2, "cpu")
        cache = M.KVCache.for_layers(m.args.layers)
        with torch.no_grad():
            E.forward(m, torch.tensor([list(range(10))]), cache=cache)
            E.forward(m, torch.tensor([[10]]), start=10, cache=cache)
        self.assertEqual([cache[n].k.shape[2] for n in ("0", "1")], [11, 3])


class BatchTest(unittest.TestCase):
    """Prompts of different lengths decoded together, left-padded, make
    the tokens each makes alone: greedy and sampled, rows that stop early
    (a stop token) beside rows that go on, equal lengths (no padding),
    windows shorter and longer than the prompts, and a GPT-2's learned
    positions; on CPU (fp32) and, with a GPU, in fp32 there."""

    LENGTHS = (1, 11, 3, 7, 5)

    def model(self, a, device):
        m = M.Transformer(a)
        M.init_full(m, 2, "cpu")
        with torch.no_grad():  # sharper logits than the initial ones, so ties cannot decide
            for p in m.parameters():
                p.mul_(4)
            for fqn, p in m.named_parameters():
                if fqn.endswith(".bias"):
                    p.normal_(0, 0.1, generator=torch.Generator().manual_seed(3))
        m = m.to(device).eval()
        m.init_buffers(torch.device(device))
        return m

    def completions(self, m, prompts, g, device, together):
        a = m.args
        rows = [E.Completion(p, g, a, 100 + i) for i, p in enumerate(prompts)]
        batches = [rows] if together else [[c] for c in rows]
        for rs in batches:
            b = E.Batch(rs, a, torch.device(device))
            while b.going:
                b.step(m)
        return [(c.out, c.finish) for c in rows]

    @torch.no_grad()
    def test_a_batch_makes_what_each_prompt_makes_alone(self):
        import dataclasses
        import types
        base = KVCacheTest.ARGS
        models = {"full": base, "window 6 in every layer": dataclasses.replace(base, window=6, windowed_layers=(0, 1, 2, 3)),
                  "window 5 from layer 2": dataclasses.replace(base, window=5, windowed_layers=(2, 3)),
                  "gpt2": M.gpt(dataclasses.replace(base, kv_heads=4))}
        runs = [(name, "cpu") for name in models]
        if torch.cuda.is_available():
            runs += [("window 5 from layer 2", "cuda"), ("gpt2", "cuda")]
        rng = np.random.default_rng(11)
        prompts = [rng.integers(0, 128, size=n).tolist() for n in self.LENGTHS]
        same = [rng.integers(0, 128, size=6).tolist() for _ in range(3)]
        for name, device in runs:
            m = self.model(models[name], device)
            for temperature in (0.0, 1.0):
                g = types.SimpleNamespace(max_new_tokens=16, temperature=temperature, top_p=0.9, stop=[])
                alone = self.completions(m, prompts, g, device, False)
                # A stop token one row makes from its fourth token on and
                # another row never makes: the one ends early while the
                # other goes on to its length.
                stops = [(r, t) for r, (out, _) in enumerate(alone) for t in out[3:] if any(t not in o for o, _ in alone)]
                if not stops:
                    self.fail(f"{name}: every row made every later token of every other; no stop token splits them")
                row, g.stop = stops[0][0], [stops[0][1]]
                alone = self.completions(m, prompts, g, device, False)
                with self.subTest(model=name, device=device, temperature=temperature):
                    self.assertEqual(self.completions(m, prompts, g, device, True), alone)
                    self.assertEqual(alone[row][1], "eos")
                    self.assertIn("length", [f for _, f in alone])
                with self.subTest(model=name, device=device, temperature=temperature, lengths="equal"):
                    self.assertEqual(self.completions(m, same, g, device, True), self.completions(m, same, g, device, False))


SEQ = 32


def make_model(folder, family="LlamaConfig", **extra):
    """A small random model of a transformers family (Llama unless named),
    made and saved by transformers, with norms moved off one so that every
    weight matters."""
    import transformers
    from transformers import AutoModelForCausalLM
    torch.manual_seed(0)
    cfg = getattr(transformers, family)(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                        num_key_value_heads=2, vocab_size=128, max_position_embeddings=SEQ, rms_norm_eps=1e-5,
                                        tie_word_embeddings=False, initializer_range=0.1, **extra)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32, attn_implementation="eager")
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "norm" in n:
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(folder)
    model.generation_config.eos_token_id = None  # a random model may pick Llama's eos id; generate every token
    return model.eval()


def eval_config(work, folder):
    """The evaluation of the model in folder as plugins/train writes it,
    with the questions, prompts and answers in work."""
    with open(os.path.join(HERE, "testdata", "eval.json")) as f:
        cfg = json.load(f)
    cfg.update(weights=folder, data=[work + "/valid"])
    cfg["model"]["hf"] = folder
    cfg["choices"] = {"questions": work + "/questions.jsonl", "scores": work + "/scores.jsonl"}
    cfg["generate"].update(prompts=work + "/prompts.jsonl", completions=work + "/completions.jsonl")
    return cfg


def run_evaluator(cfg, path, nproc):
    """evaluate.py under torchrun on nproc CPU ranks; its eval event."""
    with open(path, "w") as f:
        json.dump(cfg, f)
    return next(e["eval"] for e in launch("evaluate.py", path, nproc, timeout=300) if e["event"] == "eval")


@unittest.skipUnless(HAVE_TRANSFORMERS, "needs transformers")
class AgainstTransformersTest(unittest.TestCase):
    """evaluate.py on CPU ranks (fp32) against transformers' fp32."""

    FAMILY = ("LlamaConfig", {})

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp()
        folder = os.path.join(cls.work, "model")
        cls.hf = make_model(folder, cls.FAMILY[0], **cls.FAMILY[1])
        rng = np.random.default_rng(3)
        cls.stream = rng.integers(0, 128, size=5 * SEQ + 1)
        write_shard(cls.work + "/valid", [cls.stream])
        cls.questions = [{"context": rng.integers(0, 128, size=int(rng.integers(3, 40))).tolist(),
                          "continuations": [rng.integers(0, 128, size=int(rng.integers(1, 5))).tolist() for _ in range(3)]}
                         for _ in range(6)]
        E.write_jsonl(cls.work + "/questions.jsonl", cls.questions)
        cls.prompts = [rng.integers(0, 128, size=5).tolist() for _ in range(3)]
        E.write_jsonl(cls.work + "/prompts.jsonl", [{"tokens": p} for p in cls.prompts])
        cfg = eval_config(cls.work, folder)
        cls.result = run_evaluator(cfg, cls.work + "/config.json", 2)

    @torch.no_grad()
    def test_loss_matches(self):
        tokens = torch.tensor(self.stream[: 5 * SEQ + 1].astype(np.int64))
        rows = torch.stack([tokens[i * SEQ: i * SEQ + SEQ + 1] for i in range(5)])
        logits = self.hf(rows[:, :-1]).logits
        want = torch.nn.functional.cross_entropy(logits.flatten(0, 1), rows[:, 1:].flatten()).item()
        self.assertEqual(self.result["valid_tokens"], 5 * SEQ)
        self.assertAlmostEqual(self.result["valid_loss"], want, delta=1e-4 * want)
        self.assertAlmostEqual(self.result["valid_perplexity"], math.exp(want), delta=1e-3 * math.exp(want))

    @torch.no_grad()
    def test_choice_scores_match(self):
        got = E.read_jsonl(self.work + "/scores.jsonl")
        self.assertEqual(len(got), len(self.questions))
        for q, s in zip(self.questions, got):
            self.assertEqual(len(s["loglikelihoods"]), len(q["continuations"]))
            for cont, ll in zip(q["continuations"], s["loglikelihoods"]):
                row = E.window(q["context"], cont, SEQ)
                logp = torch.log_softmax(self.hf(torch.tensor([row])).logits[0], dim=-1)
                want, _ = E.continuation_score(logp, len(row), cont)
                self.assertAlmostEqual(ll, want, delta=1e-3)

    @torch.no_grad()
    def test_greedy_completions_match(self):
        got = E.read_jsonl(self.work + "/completions.jsonl")
        self.assertEqual(len(got), len(self.prompts))
        for p, c in zip(self.prompts, got):
            want = self.hf.generate(torch.tensor([p]), max_new_tokens=6, do_sample=False, attention_mask=torch.ones(1, len(p), dtype=torch.long),
                                    pad_token_id=0)[0, len(p):].tolist()
            self.assertEqual(c["tokens"], want)
            self.assertEqual(c["finish"], "length")


class WindowedAgainstTransformersTest(AgainstTransformersTest):
    """The same with a Mistral whose sliding window (4 tokens) is shorter
    than the prompts (5), the choices' rows and the loss's samples (32):
    transformers' generate keeps its own window of keys and values."""

    FAMILY = ("MistralConfig", {"sliding_window": 4})


@unittest.skipUnless(HAVE_TRANSFORMERS, "needs transformers")
class ShardedTest(unittest.TestCase):
    """The evaluation of one model on one CPU rank holding it whole, and on
    two ranks that each hold half of it (fsdp = true): the same loss,
    choice scores and sampled completions. The ranks' shares are uneven
    (5 samples in micro-batches of 2, 5 questions, 9 prompts in 5 batches
    of up to 2), and the completions stop at different lengths (one token
    in twelve ends one), so every loop runs forwards on a rank that has
    nothing left."""

    @classmethod
    def edit(cls, cfg):
        """Changes the evaluation both runs make (ShardedLoRATest's)."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp()
        folder = os.path.join(cls.work, "model")
        make_model(folder)
        rng = np.random.default_rng(5)
        write_shard(cls.work + "/valid", [rng.integers(0, 128, size=5 * SEQ + 1)])
        E.write_jsonl(cls.work + "/questions.jsonl", [
            {"context": rng.integers(0, 128, size=int(rng.integers(3, 40))).tolist(),
             "continuations": [rng.integers(0, 128, size=int(rng.integers(1, 5))).tolist() for _ in range(3)]} for _ in range(5)])
        E.write_jsonl(cls.work + "/prompts.jsonl", [{"tokens": rng.integers(0, 128, size=int(rng.integers(1, 9))).tolist()} for _ in range(9)])
        cls.runs = {}
        for name, ranks, fsdp in (("whole", 1, False), ("sharded", 2, True)):
            work = os.path.join(cls.work, name)
            os.makedirs(work)
            cfg = eval_config(cls.work, folder)
            cfg["choices"]["scores"] = work + "/scores.jsonl"
            cfg["generate"].update(completions=work + "/completions.jsonl", max_new_tokens=10, temperature=0.8, top_p=0.9,
                                   stop=list(range(0, 128, 12)))
            cfg["layout"].update(dp=ranks, fsdp=fsdp, global_batch=2 * ranks)
            cls.edit(cfg)
            result = run_evaluator(cfg, work + "/config.json", ranks)
            cls.runs[name] = (result, E.read_jsonl(work + "/scores.jsonl"), E.read_jsonl(work + "/completions.jsonl"))

    def test_loss_matches(self):
        whole, sharded = self.runs["whole"][0], self.runs["sharded"][0]
        self.assertEqual(sharded["valid_tokens"], whole["valid_tokens"])
        self.assertAlmostEqual(sharded["valid_loss"], whole["valid_loss"], delta=1e-5 * whole["valid_loss"])

    def test_choice_scores_match(self):
        whole, sharded = self.runs["whole"][1], self.runs["sharded"][1]
        self.assertEqual(len(sharded), 5)
        self.assertEqual(len(whole), len(sharded))
        for w, s in zip(whole, sharded):
            self.assertEqual(s["greedy"], w["greedy"])
            self.assertEqual(len(s["loglikelihoods"]), len(w["loglikelihoods"]))
            for a, b in zip(s["loglikelihoods"], w["loglikelihoods"]):
                self.assertAlmostEqual(a, b, delta=1e-5)

    def test_completions_are_token_identical(self):
        whole, sharded = self.runs["whole"][2], self.runs["sharded"][2]
        self.assertEqual(sharded, whole)
        self.assertGreater(len({len(c["tokens"]) for c in whole}), 1, "the test wants completions of different lengths")


class ShardedLoRATest(ShardedTest):
    """The same over a LoRA fine-tune's adapters (on q_proj and v_proj,
    random, so that they change every figure), each rank reading its share
    of them beside its share of the base."""

    @classmethod
    def edit(cls, cfg):
        from safetensors.torch import save_file
        path = os.path.join(cls.work, E.ADAPTERS_FILE)
        if not os.path.exists(path):
            g = torch.Generator().manual_seed(9)
            tensors = {}
            for layer in range(2):
                for proj, out in (("q_proj", 64), ("v_proj", 32)):
                    at = f"layers.{layer}.attention.{proj}"
                    tensors[at + ".lora_a.weight"] = torch.randn(4, 64, generator=g) * 0.3
                    tensors[at + ".lora_b.weight"] = torch.randn(out, 4, generator=g) * 0.3
            save_file(tensors, path, metadata={"rank": "4", "alpha": "8", "targets": "q_proj,v_proj"})
        cfg.update(base=cfg["weights"], base_format="hf", weights=path, weights_format="checkpoint")


if __name__ == "__main__":
    unittest.main()
