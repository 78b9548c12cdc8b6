"""Mistral: Llama's decoder with sliding-window attention in every layer
(sliding_window tokens; none where it is null)."""

from models.llama.args import shape_args
from models.llama.state_dict_adapter import from_hf, module_to_hf, peft_tensors, to_hf

ARCHITECTURE = "MistralForCausalLM"


def model_args(hf, m):
    window = hf.get("sliding_window") or 0
    return shape_args(hf, m, window=window, windowed_layers=tuple(range(m.layers)) if window else ())


__all__ = ["ARCHITECTURE", "model_args", "to_hf", "from_hf", "module_to_hf", "peft_tensors"]
