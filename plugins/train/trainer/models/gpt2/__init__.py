"""GPT-2 (GPT2LMHeadModel): learned positions, LayerNorm, a GELU MLP and
biases; model.py builds it when ModelArgs.activation is "gelu"."""

from models.gpt2.args import model_args
from models.gpt2.state_dict_adapter import module_to_hf, peft_tensors, to_hf

ARCHITECTURE = "GPT2LMHeadModel"

__all__ = ["ARCHITECTURE", "model_args", "to_hf", "module_to_hf", "peft_tensors"]
