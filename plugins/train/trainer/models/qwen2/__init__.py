"""Qwen2: Llama's decoder with biases on q, k and v (not o), tied
embeddings in the small models, and a sliding window it does not use
unless use_sliding_window."""

from models.llama.args import shape_args
from models.llama.state_dict_adapter import from_hf, module_to_hf, to_hf

ARCHITECTURE = "Qwen2ForCausalLM"


def model_args(hf, m):
    window = hf.get("sliding_window") if hf.get("use_sliding_window") else None
    if window and m.seq_len > window:
        raise ValueError(f"seq_len {m['seq_len']} exceeds the sliding window of {window} tokens, and the trainer attends over the whole sequence")
    return shape_args(hf, m, qkv_bias=True, o_bias=False)


__all__ = ["ARCHITECTURE", "model_args", "to_hf", "from_hf", "module_to_hf"]
