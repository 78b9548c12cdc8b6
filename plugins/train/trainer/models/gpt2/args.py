"""ModelArgs from a GPT-2 config.json (GPT2Config's keys)."""

# GPT-2's GELU is the tanh approximation, under transformers' names for it.
TANH_GELU = ("gelu_new", "gelu_pytorch_tanh", "gelu_fast")


def check(hf, m):
    """Refuses what the trainer's GPT-2 does not reproduce."""
    act = hf.get("activation_function", "gelu_new")
    if act not in TANH_GELU:
        raise ValueError(f"activation_function {act} is not GELU's tanh approximation ({', '.join(TANH_GELU)}), which the trainer builds")
    if hf.get("scale_attn_by_inverse_layer_idx") or hf.get("reorder_and_upcast_attn"):
        raise ValueError("scale_attn_by_inverse_layer_idx and reorder_and_upcast_attn are not supported: the trainer's attention is GPT-2's plain one")
    if hf.get("scale_attn_weights") is False:
        raise ValueError("scale_attn_weights = false is not supported: the trainer scales attention by 1/sqrt(head_dim)")
    positions = int(hf.get("n_positions", 1024))
    if m.seq_len > positions:
        raise ValueError(f"seq_len {m.seq_len} exceeds n_positions {positions}, the rows of the model's position table")
    return positions


def model_args(hf, m):
    """The shape gpuflow planned with (seq_len the workload's); the
    position table keeps all of the folder's n_positions rows, so that an
    export loads where the folder did."""
    from model import ModelArgs, gpt  # torch; check is testable without it
    positions = check(hf, m)
    a = ModelArgs(layers=m.layers, hidden=m.hidden, ffn_hidden=m.ffn_hidden, heads=m.heads, kv_heads=m.heads, vocab=m.vocab,
                  seq_len=m.seq_len, tied_embeddings=bool(hf.get("tie_word_embeddings", True)),
                  norm_eps=float(hf.get("layer_norm_epsilon", 1e-5)))
    return gpt(a, positions)
