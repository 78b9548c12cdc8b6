"""Mistral: Llama's decoder with sliding-window attention. The trainer
attends over the whole sequence, which is the same as the window for
sequences no longer than it; longer ones are refused."""

from models.llama.args import shape_args
from models.llama.state_dict_adapter import from_hf, module_to_hf, to_hf

ARCHITECTURE = "MistralForCausalLM"


def model_args(hf, m):
    window = hf.get("sliding_window")
    if window and m.seq_len > window:
        raise ValueError(f"seq_len {m['seq_len']} exceeds the sliding window of {window} tokens, and the trainer attends over the whole sequence")
    return shape_args(hf, m)


__all__ = ["ARCHITECTURE", "model_args", "to_hf", "from_hf", "module_to_hf"]
