"""The Hugging Face side of the model families without PyTorch: key maps
and rotary settings from both generations of config.json."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from models.llama.args import rope_settings  # noqa: E402
from models.llama.state_dict_adapter import from_hf, module_to_hf, to_hf  # noqa: E402


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
