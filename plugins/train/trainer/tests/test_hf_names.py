"""The Hugging Face side of the model families without PyTorch: key maps
and rotary settings from both generations of config.json."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from models import gpt2  # noqa: E402
from models.gpt2.args import check as gpt2_check  # noqa: E402
from models.llama.args import rope_settings  # noqa: E402
from models.llama.state_dict_adapter import from_hf, module_to_hf, to_hf  # noqa: E402
from models.slot import Slot, hf_box, hf_shape  # noqa: E402


class KeyMapTest(unittest.TestCase):
    def test_every_parameter_round_trips(self):
        names = ["tok_embeddings.weight", "norm.weight", "output.weight"]
        for sub in ("attention_norm", "ffn_norm", "attention.q_proj", "attention.k_proj", "attention.v_proj", "attention.o_proj",
                    "feed_forward.gate_proj", "feed_forward.up_proj", "feed_forward.down_proj"):
            names.append(f"layers.11.{sub}.weight")
        names += ["layers.0.attention.q_proj.bias", "layers.0.attention.o_proj.bias"]
        for n in names:
            self.assertEqual(from_hf(to_hf(n)), n)
        self.assertEqual(to_hf("layers.3.attention.k_proj.bias"), "model.layers.3.self_attn.k_proj.bias")
        self.assertEqual(to_hf("layers.3.ffn_norm.weight"), "model.layers.3.post_attention_layernorm.weight")
        self.assertEqual(to_hf("output.weight"), "lm_head.weight")

    def test_peft_module_names(self):
        self.assertEqual(module_to_hf("layers.5.attention.v_proj"), "model.layers.5.self_attn.v_proj")

    def test_adapters_have_no_transformers_name(self):
        with self.assertRaises(KeyError):
            to_hf("layers.0.attention.q_proj.lora_a.weight")


class GPT2KeyMapTest(unittest.TestCase):
    def test_names(self):
        self.assertEqual(gpt2.to_hf("pos_embeddings.weight"), "transformer.wpe.weight")
        self.assertEqual(gpt2.to_hf("layers.2.ffn_norm.bias"), "transformer.h.2.ln_2.bias")
        self.assertEqual(gpt2.to_hf("layers.2.attention.o_proj.bias"), "transformer.h.2.attn.c_proj.bias")
        self.assertEqual(gpt2.to_hf("layers.2.feed_forward.down_proj.weight"), Slot("transformer.h.2.mlp.c_proj.weight", transposed=True))
        self.assertEqual(gpt2.to_hf("layers.2.attention.v_proj.weight"), Slot("transformer.h.2.attn.c_attn.weight", 2, 3, True))
        self.assertEqual(gpt2.to_hf("layers.2.attention.k_proj.bias"), Slot("transformer.h.2.attn.c_attn.bias", 1, 3, False))
        self.assertEqual(gpt2.module_to_hf("layers.0.attention.k_proj"), "transformer.h.0.attn.c_attn")
        self.assertEqual(gpt2.module_to_hf("layers.0.feed_forward.up_proj"), "transformer.h.0.mlp.c_fc")
        with self.assertRaises(KeyError):
            gpt2.to_hf("layers.0.feed_forward.gate_proj.weight")

    def test_a_shard_of_k_in_c_attn(self):
        """Rows 4-7 of k (8 x 8) under tensor parallelism are columns
        12-15 of c_attn ([8, 24], stored [in, out]), all its rows."""
        k = gpt2.to_hf("layers.0.attention.k_proj.weight")
        self.assertEqual(hf_shape(k, (8, 8)), (8, 24))
        self.assertEqual(hf_box(k, (8, 8), (4, 0), (4, 8)), (slice(0, 8), slice(12, 16)))
        bias = gpt2.to_hf("layers.0.attention.k_proj.bias")
        self.assertEqual((hf_shape(bias, (8,)), hf_box(bias, (8,), (4,), (4,))), ((24,), (slice(12, 16),)))

    def test_config_checks(self):
        shape = type("M", (), {"seq_len": 64})
        self.assertEqual(gpt2_check({"n_positions": 1024}, shape), 1024)
        for hf, want in (({"activation_function": "relu"}, "tanh approximation"), ({"n_positions": 32}, "exceeds n_positions 32"),
                         ({"scale_attn_by_inverse_layer_idx": True}, "not supported")):
            with self.assertRaisesRegex(ValueError, want):
                gpt2_check(hf, shape)


class RopeSettingsTest(unittest.TestCase):
    LLAMA31 = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}

    def test_older_keys(self):
        self.assertEqual(rope_settings({"rope_theta": 500000.0, "rope_scaling": dict(self.LLAMA31, rope_type="llama3")}),
                         (500000.0, self.LLAMA31))
        self.assertEqual(rope_settings({"rope_theta": 1e6, "rope_scaling": None}), (1e6, None))

    def test_rope_parameters(self):
        params = dict(self.LLAMA31, rope_type="llama3", rope_theta=500000.0)
        self.assertEqual(rope_settings({"rope_parameters": params}), (500000.0, self.LLAMA31))
        self.assertEqual(rope_settings({"rope_parameters": {"rope_type": "default", "rope_theta": 1e4}}), (1e4, None))

    def test_unknown_type_is_refused(self):
        with self.assertRaises(ValueError):
            rope_settings({"rope_scaling": {"type": "yarn", "factor": 4.0}})


if __name__ == "__main__":
    unittest.main()
