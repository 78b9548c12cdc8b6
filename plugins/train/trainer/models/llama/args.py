"""ModelArgs from a Llama config.json."""


def rope_settings(hf):
    """The rotary base and scaling under either transformers' older keys
    (rope_theta, rope_scaling) or its newer rope_parameters."""
    params = hf.get("rope_parameters") or {}
    scaling = hf.get("rope_scaling") or params
    theta = hf.get("rope_theta", params.get("rope_theta", 10000.0))
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "default":
        return float(theta), None
    if kind != "llama3":
        raise ValueError(f"rope type {kind} is not one the trainer computes (default, llama3)")
    keys = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
    return float(theta), {k: scaling[k] for k in keys}


def shape_args(hf, m, **extra):
    """The shape gpuflow planned with (seq_len the workload's), the rest
    from config.json."""
    from model import ModelArgs  # torch; rope_settings is testable without it
    theta, scaling = rope_settings(hf)
    return ModelArgs(layers=m.layers, hidden=m.hidden, ffn_hidden=m.ffn_hidden, heads=m.heads,
                     kv_heads=m.kv_heads or m.heads, vocab=m.vocab, seq_len=m.seq_len,
                     tied_embeddings=bool(hf.get("tie_word_embeddings", False)), rope_theta=theta, rope_scaling=scaling,
                     norm_eps=float(hf.get("rms_norm_eps", 1e-6)), **extra)


def model_args(hf, m):
    bias = bool(hf.get("attention_bias", False))
    if hf.get("mlp_bias"):
        raise ValueError("mlp_bias is not supported: the trainer's feed-forward layers have no bias")
    return shape_args(hf, m, qkv_bias=bias, o_bias=bias)
