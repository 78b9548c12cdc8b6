"""A Llama-family decoder in plain PyTorch: token embedding, pre-norm blocks
of grouped-query attention with rotary positions and a SwiGLU MLP, RMSNorm,
and an output projection (or the embedding, when tied). Llama, Qwen2 and
Mistral are all this decoder; what sets them apart (rotary base and
scaling, norm epsilon, biases on the attention projections) is in
ModelArgs, read from their config.json by models/<family>.

Rotary positions use the half-split layout (the first half of a head's
dimensions pairs with the second), as Hugging Face's checkpoints are
stored, so their q and k weights load without a permutation.

Module names follow Hugging Face's Llama (q_proj ... down_proj) so LoRA
targets read the same, and layers live in a ModuleDict keyed by their index,
so a pipeline stage that holds layers 8-15 still names them layers.8 ... and
checkpoints load across layouts.
"""

import math
import zlib
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts


@dataclass
class ModelArgs:
    layers: int
    hidden: int
    ffn_hidden: int
    heads: int
    kv_heads: int
    vocab: int
    seq_len: int
    tied_embeddings: bool = False
    rope_theta: float = 500000.0
    # Llama 3.1's "llama3" scaling (factor, low_freq_factor,
    # high_freq_factor, original_max_position_embeddings), or None.
    rope_scaling: dict = None
    norm_eps: float = 1e-5
    qkv_bias: bool = False  # biases on q, k and v (Qwen2; Llama's attention_bias)
    o_bias: bool = False  # a bias on o (Llama's attention_bias)

    @property
    def head_dim(self):
        return self.hidden // self.heads

    @classmethod
    def from_config(cls, m):
        """The trainer's model section of config.json (a config.ModelConfig):
        the shape, and a preset's rotary base and norm epsilon."""
        return cls(layers=m.layers, hidden=m.hidden, ffn_hidden=m.ffn_hidden, heads=m.heads, kv_heads=m.kv_heads or m.heads,
                   vocab=m.vocab, seq_len=m.seq_len, tied_embeddings=m.tied_embeddings, rope_theta=m.rope_theta, norm_eps=m.norm_eps)


def inv_frequencies(a: ModelArgs):
    """Each dimension pair's rotation per position, computed on the CPU in
    fp32 as transformers computes it, so the two agree to the last bit."""
    d = a.head_dim
    inv = 1.0 / (a.rope_theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    s = a.rope_scaling
    if not s:
        return inv
    # Llama 3.1: long wavelengths slowed by factor, short ones kept, the
    # band between blended (Meta's reference, as transformers has it).
    factor, low, high, ctx = s["factor"], s["low_freq_factor"], s["high_freq_factor"], s["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv
    scaled = torch.where(wavelen > ctx / low, inv / factor, inv)
    smooth = (ctx / wavelen - low) / (high - low)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < ctx / high) * ~(wavelen > ctx / low)
    return torch.where(medium, blended, scaled)


def rope_table(a: ModelArgs, device):
    """cos and sin of every position's rotation, stacked: (2, seq, head_dim)."""
    inv = inv_frequencies(a)
    if device is not None:
        inv = inv.to(device)
    freqs = torch.outer(torch.arange(a.seq_len, device=device, dtype=torch.float32), inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return torch.stack([emb.cos(), emb.sin()])


def apply_rope(x, rope):
    """Rotates x (batch, seq, heads, head_dim) by the half-split convention."""
    cos = rope[0][None, :, None, :].to(x.dtype)
    sin = rope[1][None, :, None, :].to(x.dtype)
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class Attention(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.head_dim = a.head_dim
        self.group = a.heads // a.kv_heads
        self.q_proj = nn.Linear(a.hidden, a.heads * a.head_dim, bias=a.qkv_bias)
        self.k_proj = nn.Linear(a.hidden, a.kv_heads * a.head_dim, bias=a.qkv_bias)
        self.v_proj = nn.Linear(a.hidden, a.kv_heads * a.head_dim, bias=a.qkv_bias)
        self.o_proj = nn.Linear(a.heads * a.head_dim, a.hidden, bias=a.o_bias)

    def forward(self, x, rope):
        b, s, _ = x.shape
        # -1 heads: under tensor parallelism each rank holds heads/tp of them.
        q = apply_rope(self.q_proj(x).view(b, s, -1, self.head_dim), rope)
        k = apply_rope(self.k_proj(x).view(b, s, -1, self.head_dim), rope)
        v = self.v_proj(x).view(b, s, -1, self.head_dim)
        # enable_gqa: query head i reads key/value head i // group inside
        # the attention kernel (cuDNN's on Hopper), without expanded copies
        # of k and v: 6% less attention time than expanding them
        # (docs/benchmarks.md, "One-GPU speed").
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True,
                                           enable_gqa=self.group > 1)
        return self.o_proj(o.transpose(1, 2).reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.gate_proj = nn.Linear(a.hidden, a.ffn_hidden, bias=False)
        self.up_proj = nn.Linear(a.hidden, a.ffn_hidden, bias=False)
        self.down_proj = nn.Linear(a.ffn_hidden, a.hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    """One pre-norm transformer layer. recompute is "none", "selective"
    (keep matrix products and attention outputs, recompute the rest) or
    "full" (keep only the block's input)."""

    def __init__(self, a: ModelArgs):
        super().__init__()
        self.attention_norm = nn.RMSNorm(a.hidden, eps=a.norm_eps)
        self.attention = Attention(a)
        self.ffn_norm = nn.RMSNorm(a.hidden, eps=a.norm_eps)
        self.feed_forward = FeedForward(a)
        self.recompute = "none"

    def body(self, x, rope):
        h = x + self.attention(self.attention_norm(x), rope)
        return h + self.feed_forward(self.ffn_norm(h))

    def forward(self, x, rope):
        if self.recompute == "none" or not torch.is_grad_enabled():  # a validation keeps nothing to recompute
            return self.body(x, rope)
        kwargs = {"context_fn": selective_context} if self.recompute == "selective" else {}
        return checkpoint(self.body, x, rope, use_reentrant=False, **kwargs)


def _saved_ops():
    ops = torch.ops.aten
    names = ["mm", "_scaled_mm", "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
             "_scaled_dot_product_cudnn_attention"]
    return {getattr(ops, n).default for n in names if hasattr(ops, n)}


def selective_context():
    """Selective recomputation: matrix products and attention are kept, the
    cheap element-wise work (norms, rotary, SiLU, products) recomputed."""
    saved = _saved_ops()

    def policy(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if op in saved else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


class Transformer(nn.Module):
    """The whole model, or one pipeline stage of it: a stage that does not
    begin the model has no tok_embeddings, one that does not end it no norm
    and output, and it keeps only its own layers."""

    def __init__(self, a: ModelArgs):
        super().__init__()
        self.args = a
        self.tok_embeddings = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleDict({str(i): Block(a) for i in range(a.layers)})
        self.norm = nn.RMSNorm(a.hidden, eps=a.norm_eps)
        self.output = None if a.tied_embeddings else nn.Linear(a.hidden, a.vocab, bias=False)
        # False on a last pipeline stage that holds the tied embedding only
        # to project onto the vocabulary.
        self.embeds_input = True
        self.register_buffer("rope", rope_table(a, None), persistent=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens) if self.embeds_input else tokens
        for layer in self.layers.values():
            h = layer(h, self.rope)
        if self.norm is None:
            return h
        h = self.norm(h)
        if self.output is not None:
            return self.output(h)
        return self.tied_logits(h)

    def tied_logits(self, h):
        """The output projection of a tied model: the embedding's weight.
        Tensor parallelism replaces it by one that keeps the logits split
        over the vocabulary (parallel.py)."""
        return F.linear(h, self.tok_embeddings.weight)

    def init_buffers(self, device):
        self.rope = rope_table(self.args, device)


def keep_stage(model: Transformer, stage: int, stages: int):
    """Trims model to pipeline stage `stage` of `stages` equal stages. The
    last stage of a tied model keeps its own copy of the embedding, under
    the same name, for the output projection: the first and last stages
    start from one value and sum their gradients of it (parallel.TiedStages)."""
    per = model.args.layers // stages
    keep = {str(i) for i in range(stage * per, (stage + 1) * per)}
    for name in list(model.layers.keys()):
        if name not in keep:
            del model.layers[name]
    if stage != 0:
        model.embeds_input = False
        if not (model.args.tied_embeddings and stage == stages - 1):
            model.tok_embeddings = None
    if stage != stages - 1:
        model.norm = None
        model.output = None
    return model


def param_seed(seed, fqn):
    """A seed per parameter name, so a parameter starts the same whichever
    rank, stage or layout creates it."""
    return (seed * 1_000_003 + zlib.crc32(fqn.encode())) % (2**63)


def init_value(fqn, tensor, layers, generator):
    """Fills tensor with the initial value of parameter fqn: GPT-2 style
    normal(0, 0.02), residual projections scaled by 1/sqrt(2*layers), norms
    at one, biases and LoRA's B zero, LoRA's A uniform."""
    with torch.no_grad():
        if fqn.endswith("norm.weight"):
            tensor.fill_(1.0)
        elif fqn.endswith(".bias"):
            tensor.zero_()
        elif ".lora_b." in fqn:
            tensor.zero_()
        elif ".lora_a." in fqn:
            bound = 1.0 / math.sqrt(tensor.shape[-1])
            tensor.uniform_(-bound, bound, generator=generator)
        elif fqn.endswith(("o_proj.weight", "down_proj.weight")):
            tensor.normal_(0.0, 0.02 / math.sqrt(2 * layers), generator=generator)
        else:
            tensor.normal_(0.0, 0.02, generator=generator)


def init_full(model: Transformer, seed, device):
    """Initialises every (unsplit) parameter from its own seeded generator."""
    for fqn, p in model.named_parameters():
        g = torch.Generator(device=device)
        g.manual_seed(param_seed(seed, fqn))
        init_value(fqn, p.data, model.args.layers, g)
    model.init_buffers(device)
