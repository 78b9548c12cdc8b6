"""The trainer's parameter names to transformers' Llama names and back.
Qwen2 and Mistral name their tensors the same way."""

import re

from models.peft import adapter_of, peft_name

TOP = {"tok_embeddings.weight": "model.embed_tokens.weight", "norm.weight": "model.norm.weight",
       "output.weight": "lm_head.weight"}
LAYER = {"attention_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
         "attention.q_proj": "self_attn.q_proj", "attention.k_proj": "self_attn.k_proj",
         "attention.v_proj": "self_attn.v_proj", "attention.o_proj": "self_attn.o_proj",
         "feed_forward.gate_proj": "mlp.gate_proj", "feed_forward.up_proj": "mlp.up_proj",
         "feed_forward.down_proj": "mlp.down_proj"}
LAYER_NAME = re.compile(r"^layers\.(\d+)\.(.+)\.(weight|bias)$")
HF_LAYER_NAME = re.compile(r"^model\.layers\.(\d+)\.(.+)\.(weight|bias)$")
FROM_TOP = {v: k for k, v in TOP.items()}
FROM_LAYER = {v: k for k, v in LAYER.items()}


def to_hf(fqn):
    """transformers' name for a trainer parameter (a LoRA layer's base
    weight is its module's own weight)."""
    if fqn in TOP:
        return TOP[fqn]
    m = LAYER_NAME.match(fqn)
    if not m or m.group(2) not in LAYER:
        raise KeyError(f"no Hugging Face name for parameter {fqn}")
    return f"model.layers.{m.group(1)}.{LAYER[m.group(2)]}.{m.group(3)}"


def from_hf(key):
    if key in FROM_TOP:
        return FROM_TOP[key]
    m = HF_LAYER_NAME.match(key)
    if not m or m.group(2) not in FROM_LAYER:
        raise KeyError(f"no trainer parameter for {key}")
    return f"layers.{m.group(1)}.{FROM_LAYER[m.group(2)]}.{m.group(3)}"


def module_to_hf(module_fqn):
    """transformers' name for a trainer module (layers.3.attention.q_proj),
    which PEFT prefixes with base_model.model."""
    return to_hf(module_fqn + ".weight")[: -len(".weight")]


def peft_tensors(adapters):
    """LoRA adapters ({trainer fqn: tensor}) under PEFT's names."""
    out = {}
    for fqn, t in adapters.items():
        module, ab = adapter_of(fqn)
        out[peft_name(module_to_hf(module), ab)] = t
    return out
