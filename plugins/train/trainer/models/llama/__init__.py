"""Llama 2, 3, 3.1 (rope scaling "llama3") and 3.2 (tied embeddings)."""

from models.llama.args import model_args
from models.llama.state_dict_adapter import from_hf, module_to_hf, peft_tensors, to_hf

ARCHITECTURE = "LlamaForCausalLM"

__all__ = ["ARCHITECTURE", "model_args", "to_hf", "from_hf", "module_to_hf", "peft_tensors"]
