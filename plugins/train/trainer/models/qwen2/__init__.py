"""Qwen2: Llama's decoder with biases on q, k and v (not o), tied
embeddings in the small models, and, with use_sliding_window, sliding-
window attention in the layers config.json's layer_types marks
"sliding_attention"; without layer_types, in the layers from
max_window_layers on, as transformers reads it."""

from models.llama.args import shape_args
from models.llama.state_dict_adapter import from_hf, module_to_hf, peft_tensors, to_hf

ARCHITECTURE = "Qwen2ForCausalLM"
MAX_WINDOW_LAYERS = 28  # transformers' default for Qwen2


def model_args(hf, m):
    window = (hf.get("sliding_window") or 0) if hf.get("use_sliding_window") else 0
    return shape_args(hf, m, qkv_bias=True, o_bias=False, window=window, windowed_layers=windowed_layers(hf, m.layers) if window else ())


def windowed_layers(hf, layers):
    types = hf.get("layer_types")
    if types:
        if len(types) != layers:
            raise ValueError(f"layer_types names {len(types)} layers, but the model has {layers}")
        return tuple(i for i, t in enumerate(types) if t == "sliding_attention")
    first = hf.get("max_window_layers", MAX_WINDOW_LAYERS)
    return tuple(range(first, layers))


__all__ = ["ARCHITECTURE", "model_args", "to_hf", "from_hf", "module_to_hf", "peft_tensors"]
