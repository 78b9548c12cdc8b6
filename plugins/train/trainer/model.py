"""A decoder in plain PyTorch: token embedding, pre-norm blocks of
attention and an MLP, a final norm, and an output projection (or the
embedding, when tied). ModelArgs.activation picks one of two families:

- "swiglu", the Llama family: grouped-query attention with rotary
  positions, a SwiGLU MLP (gate, up, down), RMSNorm. Llama, Qwen2 and
  Mistral are all this decoder; what sets them apart (rotary base and
  scaling, norm epsilon, biases on the attention projections) is in
  ModelArgs, read from their config.json by models/<family>.
- "gelu", GPT-2: learned position embeddings added to the token
  embedding, a two-matrix MLP (up, down) with GELU's tanh approximation
  between (GPT-2's "gelu_new"), LayerNorm with bias, and a bias on every
  linear layer but the output projection.

Rotary positions use the half-split layout (the first half of a head's
dimensions pairs with the second), as Hugging Face's checkpoints are
stored, so their q and k weights load without a permutation.

Sliding-window attention (Mistral's sliding_window; Qwen2's, when
use_sliding_window, in the layers from max_window_layers on) lets each
token attend to itself and the window-1 tokens before it. Where a window
is shorter than the sequence, its layers attend through a band mask:
flex_attention's block mask, compiled, on a GPU, so the blocks outside
the band are skipped; SDPA with a boolean mask on CPU ranks, whose
compiled flex_attention has no backward. A window at least as long as
the sequence is full causal attention, and runs as such.

For generation, Transformer.forward takes a KVCache: the prompt runs
once, then one token at a time against each layer's cached keys and
values (a windowed layer keeps only those within its window), GPT-2's
learned positions starting where the cache ends. Prompts of different
lengths decode together left-padded (KVCache.for_layers' pad): each row
at positions of its own, its padding masked out of attention.

Module names follow Hugging Face's Llama (q_proj ... down_proj) so LoRA
targets read the same, and layers live in a ModuleDict keyed by their index,
so a pipeline stage that holds layers 8-15 still names them layers.8 ... and
checkpoints load across layouts.
"""

import dataclasses
import functools
import math
import zlib
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask, flex_attention
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
    # "swiglu" (the Llama family) or "gelu" (GPT-2), as the language names them.
    activation: str = "swiglu"
    # Rows of GPT-2's learned position table (its n_positions); 0 for
    # rotary positions.
    positions: int = 0
    # Sliding-window attention: the span in tokens (a token and the
    # window-1 before it), 0 for none, and the layers it applies to.
    window: int = 0
    windowed_layers: tuple = ()

    @property
    def gpt(self):
        return self.activation == "gelu"

    def layer_window(self, i):
        """Layer i's window, 0 where it attends over the whole sequence."""
        return self.window if i in self.windowed_layers else 0

    @property
    def head_dim(self):
        return self.hidden // self.heads

    @classmethod
    def from_config(cls, m):
        """The trainer's model section of config.json (a config.ModelConfig):
        the shape, and a preset's rotary base and norm epsilon."""
        a = cls(layers=m.layers, hidden=m.hidden, ffn_hidden=m.ffn_hidden, heads=m.heads, kv_heads=m.kv_heads or m.heads,
                vocab=m.vocab, seq_len=m.seq_len, tied_embeddings=m.tied_embeddings, rope_theta=m.rope_theta, norm_eps=m.norm_eps)
        return gpt(a) if m.activation == "gelu" else a


def gpt(a: ModelArgs, positions=None):
    """a as GPT-2 builds it: biases on q, k, v and o, and a learned
    position table of `positions` rows (a's seq_len when not given)."""
    return dataclasses.replace(a, activation="gelu", qkv_bias=True, o_bias=True, positions=positions or a.seq_len)


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
    """Rotates x (batch, seq, heads, head_dim) by the half-split
    convention; rope is (2, seq, head_dim), or (2, batch, seq, head_dim)
    for rows at positions of their own (left-padded generation)."""
    rows = rope[:, :, :, None, :] if rope.dim() == 4 else rope[:, None, :, None, :]
    cos, sin = rows[0].to(x.dtype), rows[1].to(x.dtype)
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class Attention(nn.Module):
    def __init__(self, a: ModelArgs, window=0):
        super().__init__()
        self.head_dim = a.head_dim
        self.group = a.heads // a.kv_heads
        self.window = window  # the sliding window's span in tokens, 0 for none
        self.q_proj = nn.Linear(a.hidden, a.heads * a.head_dim, bias=a.qkv_bias)
        self.k_proj = nn.Linear(a.hidden, a.kv_heads * a.head_dim, bias=a.qkv_bias)
        self.v_proj = nn.Linear(a.hidden, a.kv_heads * a.head_dim, bias=a.qkv_bias)
        self.o_proj = nn.Linear(a.heads * a.head_dim, a.hidden, bias=a.o_bias)

    def forward(self, x, rope, band=None, cache=None):
        """band is the sliding window's mask (band_mask) where the window
        is shorter than the sequence, else None; cache a LayerCache when
        generating."""
        b, s, _ = x.shape
        # -1 heads: under tensor parallelism each rank holds heads/tp of them.
        q = self.q_proj(x).view(b, s, -1, self.head_dim)
        k = self.k_proj(x).view(b, s, -1, self.head_dim)
        if rope is not None:  # None in GPT-2, whose positions are in the embedding
            q, k = apply_rope(q, rope), apply_rope(k, rope)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = self.v_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        o = self.attend(q, k, v, band) if cache is None else self.attend_cached(q, k, v, band, cache)
        return self.o_proj(o.transpose(1, 2).reshape(b, s, -1))

    def attend(self, q, k, v, band):
        if band is not None:
            return banded_attention(q, k, v, band, self.group > 1)
        # enable_gqa: query head i reads key/value head i // group inside
        # the attention kernel (cuDNN's on Hopper), without expanded copies
        # of k and v: 6% less attention time than expanding them
        # (docs/benchmarks.md, "One-GPU speed").
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.group > 1)

    def attend_cached(self, q, k, v, band, cache):
        """The prompt attends as without a cache (left-padded rows through
        attend_padded); each later token, alone, to every key the cache
        kept, all of them within its reach."""
        prompt = cache.k is None
        if not prompt:
            if q.shape[2] != 1:
                raise ValueError("after the prompt, a key-value cache takes one token at a time")
            k, v = torch.cat([cache.k, k], dim=2), torch.cat([cache.v, v], dim=2)
        if cache.pad is not None:
            o = self.attend_padded(q, k, v, cache)
        elif prompt:
            o = self.attend(q, k, v, band)
        else:
            o = F.scaled_dot_product_attention(q, k, v, enable_gqa=self.group > 1)
        # The next token reaches back window-1 tokens.
        first = max(0, k.shape[2] - (self.window - 1)) if self.window else 0
        cache.k, cache.v = k[:, :, first:], v[:, :, first:]
        cache.first += first
        return o

    def attend_padded(self, q, k, v, cache):
        """Attention of rows left-padded to one width, cache.pad columns
        each, over k and v with the cached keys before them: a row's query
        sees the row's keys from its first real column on, causally and
        within the window; a padding column sees itself alone, so that no
        row of scores is empty (its output is never read). Columns count
        from the batch's first; cache.first is the column of k's first."""
        cols = cache.first + torch.arange(k.shape[2], device=q.device)
        qcols = cols[-q.shape[2]:, None]
        seen = (cols <= qcols) & (cols[None, :] >= cache.pad[:, None, None])
        if self.window:
            seen &= qcols - cols < self.window
        mask = (seen | (cols == qcols))[:, None]
        if self.group > 1:
            k, v = k.repeat_interleave(self.group, 1), v.repeat_interleave(self.group, 1)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


# flex_attention compiled once for the process: uncompiled it runs an
# unfused reference that holds the whole score matrix, and inside a
# compiled block the compiler inlines it.
compiled_flex_attention = torch.compile(flex_attention)


@functools.lru_cache(maxsize=16)
def band_mask(seq, window, device):
    """The sliding window's mask over seq tokens: query i reads keys
    i-window+1 .. i. On a GPU flex_attention's block mask; on CPU a boolean
    (seq, seq) matrix for SDPA, since the compiler's CPU flex_attention
    runs forwards only (no backward to train with)."""
    if device.type == "cpu":
        i = torch.arange(seq, device=device)
        back = i[:, None] - i[None, :]
        return (back >= 0) & (back < window)

    def in_band(b, h, q_idx, kv_idx):
        return (kv_idx <= q_idx) & (q_idx - kv_idx < window)

    return create_block_mask(in_band, None, None, seq, seq, device=device)


def banded_attention(q, k, v, band, gqa):
    """Attention within band (band_mask's), q, k, v as (batch, heads,
    seq, head_dim)."""
    if isinstance(band, torch.Tensor):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=band, enable_gqa=gqa)
    return compiled_flex_attention(q, k, v, block_mask=band, enable_gqa=gqa)


class LayerCache:
    """One layer's keys and values, (batch, kv_heads, tokens, head_dim),
    of the tokens run so far; None before the prompt. pad, for rows
    left-padded to one width, is each row's padding columns (a tensor);
    first is the column of the first key kept."""

    def __init__(self, pad=None):
        self.k = self.v = None
        self.pad, self.first = pad, 0


class KVCache(dict):
    """Every layer's LayerCache, by layer name, all made up front
    (for_layers): FSDP2, moving a sharded model's inputs to its GPU, hands
    the forward a copy of a dict input, made as KVCache(pairs), where an
    entry made on first use would be lost; the copy shares these."""

    @classmethod
    def for_layers(cls, layers, pad=None):
        """pad: each row's left padding (a tensor on the model's device),
        or None where the rows are all real tokens."""
        return cls((str(i), LayerCache(pad)) for i in range(layers))


def cache_pad(cache):
    """The rows' left padding a KVCache holds (None where its rows are all
    real tokens): read from a layer's cache, since a sharded model's
    forward may get a plain dict copy of the KVCache, holding the same
    LayerCaches."""
    return next(iter(cache.values())).pad if cache else None


class FeedForward(nn.Module):
    def __init__(self, a: ModelArgs):
        super().__init__()
        self.gate_proj = nn.Linear(a.hidden, a.ffn_hidden, bias=False)
        self.up_proj = nn.Linear(a.hidden, a.ffn_hidden, bias=False)
        self.down_proj = nn.Linear(a.ffn_hidden, a.hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class GeluFeedForward(nn.Module):
    """GPT-2's MLP: up (c_fc) and down (c_proj), both with a bias, GELU's
    tanh approximation between, as GPT-2 was trained with."""

    def __init__(self, a: ModelArgs):
        super().__init__()
        self.up_proj = nn.Linear(a.hidden, a.ffn_hidden, bias=True)
        self.down_proj = nn.Linear(a.ffn_hidden, a.hidden, bias=True)

    def forward(self, x):
        return self.down_proj(F.gelu(self.up_proj(x), approximate="tanh"))


def make_norm(a: ModelArgs):
    """RMSNorm for the Llama family, LayerNorm with a bias for GPT-2."""
    if a.gpt:
        return nn.LayerNorm(a.hidden, eps=a.norm_eps)
    return nn.RMSNorm(a.hidden, eps=a.norm_eps)


class Block(nn.Module):
    """One pre-norm transformer layer. recompute is "none", "selective"
    (keep matrix products and attention outputs, recompute the rest) or
    "full" (keep only the block's input)."""

    def __init__(self, a: ModelArgs, window=0):
        super().__init__()
        self.attention_norm = make_norm(a)
        self.attention = Attention(a, window)
        self.ffn_norm = make_norm(a)
        self.feed_forward = GeluFeedForward(a) if a.gpt else FeedForward(a)
        self.recompute = "none"

    def body(self, x, rope, band=None, cache=None):
        h = x + self.attention(self.attention_norm(x), rope, band, cache)
        return h + self.feed_forward(self.ffn_norm(h))

    def forward(self, x, rope, band=None, cache=None):
        if self.recompute == "none" or not torch.is_grad_enabled():  # a validation keeps nothing to recompute
            return self.body(x, rope, band, cache)
        kwargs = {"context_fn": selective_context} if self.recompute == "selective" else {}
        return checkpoint(self.body, x, rope, band, use_reentrant=False, **kwargs)


def _saved_ops():
    ops = torch.ops.aten
    names = ["mm", "_scaled_mm", "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
             "_scaled_dot_product_cudnn_attention"]
    saved = {getattr(ops, n).default for n in names if hasattr(ops, n)}
    flex = getattr(torch.ops.higher_order, "flex_attention", None)  # sliding-window layers' attention
    return saved | ({flex} if flex is not None else set())


def selective_context():
    """Selective recomputation: matrix products and attention are kept, the
    cheap element-wise work (norms, rotary, SiLU or GELU, products)
    recomputed."""
    saved = _saved_ops()

    def policy(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if op in saved else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


class Transformer(nn.Module):
    """The whole model, or one pipeline stage of it: a stage that does not
    begin the model has no tok_embeddings (nor GPT-2's pos_embeddings), one
    that does not end it no norm and output, and it keeps only its own
    layers."""

    def __init__(self, a: ModelArgs):
        super().__init__()
        self.args = a
        self.tok_embeddings = nn.Embedding(a.vocab, a.hidden)
        self.pos_embeddings = nn.Embedding(a.positions, a.hidden) if a.positions else None
        self.layers = nn.ModuleDict({str(i): Block(a, a.layer_window(i)) for i in range(a.layers)})
        self.norm = make_norm(a)
        self.output = None if a.tied_embeddings else nn.Linear(a.hidden, a.vocab, bias=False)
        # False on a last pipeline stage that holds the tied embedding only
        # to project onto the vocabulary.
        self.embeds_input = True
        self.register_buffer("rope", None if a.positions else rope_table(a, None), persistent=False)

    def forward(self, tokens, cache=None, start=0):
        """cache, a KVCache, when generating, and start the position of
        tokens' first, the number the cache holds: GPT-2's learned
        positions begin there, and the rotary table holds the positions of
        tokens alone (evaluate.forward cuts it)."""
        pad = cache_pad(cache) if cache is not None else None
        h = self.embed(tokens, start, pad) if self.embeds_input else tokens
        # Left-padded rows attend through masks of their own (attend_padded).
        bands = self.bands(tokens) if pad is None else {}
        for name, layer in self.layers.items():
            band = bands.get(layer.attention.window)
            h = layer(h, self.rope, band, cache[name]) if cache is not None else layer(h, self.rope, band)
        if self.norm is None:
            return h
        h = self.norm(h)
        if self.output is not None:
            return self.output(h)
        return self.tied_logits(h)

    def bands(self, tokens):
        """band_mask's mask per window shorter than the sequence, which is
        as long as the rotary table (under sequence parallelism h holds a
        part of it); GPT-2, without one, takes it from tokens (its layers
        have no window)."""
        if self.rope is not None:
            seq, device = self.rope.shape[-2], self.rope.device
        else:
            seq, device = tokens.shape[1], tokens.device
        windows = {layer.attention.window for layer in self.layers.values()}
        return {w: band_mask(seq, w, device) for w in windows if 0 < w < seq}

    def embed(self, tokens, start=0, pad=None):
        h = self.tok_embeddings(tokens)
        if self.pos_embeddings is None:
            return h
        if pad is not None:
            return h + self.pos_embeddings(padded_positions(pad, start, tokens.shape[1], self.args.positions))
        # Positions as a (1, seq) batch, so that tensor parallelism splits
        # their embedding's output along the sequence as it does the tokens'.
        positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)[None, :]
        return h + self.pos_embeddings(positions)

    def tied_logits(self, h):
        """The output projection of a tied model: the embedding's weight.
        Tensor parallelism replaces it by one that keeps the logits split
        over the vocabulary (parallel.py)."""
        return F.linear(h, self.tok_embeddings.weight)

    def init_buffers(self, device):
        if not self.args.positions:
            self.rope = rope_table(self.args, device)


def padded_positions(pad, start, length, positions):
    """Each left-padded row's positions for the columns start..start+length:
    the column less the row's padding, held within 0..positions-1 (a
    padding column's, and a finished row's past its end, are never read)."""
    cols = torch.arange(start, start + length, device=pad.device)
    return (cols[None, :] - pad[:, None]).clamp(0, positions - 1)


def keep_stage(model: Transformer, stage: int, stages: int, sizes=None):
    """Trims model to pipeline stage `stage` of `stages`: the layers
    sizes[stage] counts after those of the stages before it (equal stages
    without sizes). The last stage of a tied model keeps its own copy of
    the embedding, under the same name, for the output projection: the
    first and last stages start from one value and sum their gradients of
    it (parallel.TiedStages)."""
    sizes = sizes or [model.args.layers // stages] * stages
    assert len(sizes) == stages and sum(sizes) == model.args.layers, (sizes, stages, model.args.layers)
    start = sum(sizes[:stage])
    keep = {str(i) for i in range(start, start + sizes[stage])}
    for name in list(model.layers.keys()):
        if name not in keep:
            del model.layers[name]
    if stage != 0:
        model.embeds_input = False
        model.pos_embeddings = None
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
    normal(0, 0.02) (embeddings, GPT-2's positions too, and weights),
    residual projections scaled by 1/sqrt(2*layers), norms at one, biases
    and LoRA's B zero, LoRA's A uniform."""
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
