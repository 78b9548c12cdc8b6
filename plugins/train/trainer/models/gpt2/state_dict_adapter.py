"""The trainer's parameter names to transformers' GPT-2 names, and LoRA
adapters to PEFT's.

GPT-2's linear layers are Conv1D, stored [in, out], and its attention
keeps q, k and v in one of them (attn.c_attn, output [q; k; v]); the
trainer keeps them apart as nn.Linear ([out, in]), so those parameters
map to Slots (models/slot.py)."""

import re

from models.peft import adapter_of, peft_name
from models.slot import Slot

TOP = {"tok_embeddings.weight": "transformer.wte.weight", "pos_embeddings.weight": "transformer.wpe.weight",
       "norm.weight": "transformer.ln_f.weight", "norm.bias": "transformer.ln_f.bias", "output.weight": "lm_head.weight"}
# Trainer module -> GPT-2 module, and for q, k and v their block of c_attn.
MODULES = {"attention_norm": "ln_1", "ffn_norm": "ln_2", "attention.o_proj": "attn.c_proj",
           "feed_forward.up_proj": "mlp.c_fc", "feed_forward.down_proj": "mlp.c_proj"}
QKV = {"attention.q_proj": 0, "attention.k_proj": 1, "attention.v_proj": 2}
CONV1D = {"attention.o_proj", "feed_forward.up_proj", "feed_forward.down_proj"}
LAYER_NAME = re.compile(r"^layers\.(\d+)\.(.+)\.(weight|bias)$")
LAYER_MODULE = re.compile(r"^layers\.(\d+)\.(.+)$")


def to_hf(fqn):
    """transformers' name for a trainer parameter, or its Slot in a fused
    or transposed tensor."""
    if fqn in TOP:
        return TOP[fqn]
    m = LAYER_NAME.match(fqn)
    if not m:
        raise KeyError(f"no Hugging Face name for parameter {fqn}")
    layer, module, kind = m.groups()
    prefix = f"transformer.h.{layer}."
    if module in QKV:
        return Slot(f"{prefix}attn.c_attn.{kind}", QKV[module], 3, kind == "weight")
    if module not in MODULES:
        raise KeyError(f"no Hugging Face name for parameter {fqn}")
    key = f"{prefix}{MODULES[module]}.{kind}"
    return Slot(key, transposed=True) if module in CONV1D and kind == "weight" else key


def module_to_hf(module_fqn):
    """transformers' name for a trainer module (layers.3.attention.o_proj);
    q, k and v are all attn.c_attn."""
    m = LAYER_MODULE.match(module_fqn)
    if not m or (m.group(2) not in MODULES and m.group(2) not in QKV):
        raise KeyError(f"no Hugging Face module for {module_fqn}")
    name = "attn.c_attn" if m.group(2) in QKV else MODULES[m.group(2)]
    return f"transformer.h.{m.group(1)}.{name}"


def peft_tensors(adapters):
    """LoRA adapters ({trainer fqn: tensor}) as PEFT holds them on GPT-2:
    {PEFT name: tensor}. PEFT adapts the fused c_attn as one layer, so the
    q, k and v adapters of a layer become one adapter exactly: its A the
    present adapters' A rows one after another, its B block-diagonal
    (zero where c_attn's block has no adapter), of rank n * r for n of
    q, k, v adapted. peft_patterns gives it alpha n * alpha, so that its
    scaling alpha / r is theirs (gpuflow writes
    adapter_config.json: plugins/train/export.go)."""
    import torch
    grouped = {}
    for fqn, t in adapters.items():
        module, ab = adapter_of(fqn)
        grouped.setdefault(module, {})[ab] = t
    out, fused = {}, {}
    for module, ab in grouped.items():
        layer, sub = LAYER_MODULE.match(module).groups()
        if sub in QKV:
            fused.setdefault(layer, {})[QKV[sub]] = ab
            continue
        for k, t in ab.items():
            out[peft_name(module_to_hf(module), k)] = t
    for layer, blocks in fused.items():
        order = sorted(blocks)
        a = torch.cat([blocks[i]["A"] for i in order])
        rank, width = blocks[order[0]]["A"].shape[0], blocks[order[0]]["B"].shape[0]
        b = torch.zeros(3 * width, rank * len(order), dtype=a.dtype)
        for j, i in enumerate(order):
            b[i * width:(i + 1) * width, j * rank:(j + 1) * rank] = blocks[i]["B"]
        c_attn = f"transformer.h.{layer}.attn.c_attn"
        out[peft_name(c_attn, "A")], out[peft_name(c_attn, "B")] = a, b
    return out
