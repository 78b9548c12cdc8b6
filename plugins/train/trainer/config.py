"""The trainer's config.json, typed. plugins/train writes it (config.go:
runConfig, modelConfig, loraConfig, and plugins/api's Layout; for the
evaluator, evalrun.go: evalConfig, choicesFiles, generateConfig); these
dataclasses mirror those structs field for field, and a Go test holds the
two in step. A field Go leaves out when empty (omitempty) has a default
here; every other field is required. load() checks the file against them,
so a config the trainer cannot read fails at start with the field at
fault, not mid-run.

Field lines are `name: type` or `name: type = default`, one per line,
with comments above them: the Go test reads this file.
"""

import dataclasses
import json
import typing
from dataclasses import dataclass, field
from typing import Optional


class ConfigError(Exception):
    """config.json does not match what the trainer reads."""


@dataclass
class ModelConfig:
    layers: int
    hidden: int
    ffn_hidden: int
    heads: int
    kv_heads: int
    vocab: int
    seq_len: int
    tied_embeddings: bool
    activation: str
    architecture: str
    # A preset's rotary base and RMSNorm epsilon; a folder's come from
    # its config.json.
    rope_theta: float
    norm_eps: float
    # The Hugging Face folder whose config.json gives what the shape does
    # not (rotary, norms, biases); empty for a preset.
    hf: str = ""


@dataclass
class Layout:
    tp: int
    pp: int
    dp: int
    cp: int
    # Virtual pipeline stages per rank; 1 is plain 1F1B.
    vp: int
    # ZeRO stage 0..3; fsdp is full sharding.
    zero: int
    fsdp: bool
    micro_batch: int
    global_batch: int
    # none, selective or full.
    recompute: str
    sequence_parallel: bool
    # bf16, fp16 or fp8.
    precision: str
    # Framework options the estimator reads; empty means the default.
    attention: str = ""
    scatter_gather: Optional[bool] = None
    grad_reduce_dtype: str = ""
    overlap_grad_reduce: Optional[bool] = None
    grad_accumulation_fusion: Optional[bool] = None
    async_tp_allreduce: Optional[bool] = None
    scatter_gather_grads: Optional[bool] = None
    # Layers on the first and last pipeline stage; 0 takes the even share.
    first_stage_layers: int = 0
    last_stage_layers: int = 0


@dataclass
class LoRAConfig:
    rank: int
    alpha: float
    # Module names (q_proj or q, ...), or all-linear.
    targets: list[str]
    dropout: float


@dataclass
class RunConfig:
    # The stage's address (pretrain.NAME) and type.
    stage: str
    type: str
    model: ModelConfig
    layout: Layout
    # Megatron shard prefixes (PREFIX.bin and PREFIX.idx).
    data: list[str]
    steps: int
    lr: float
    min_lr: float
    # cosine, linear or constant.
    schedule: str
    warmup_steps: int
    weight_decay: float
    seed: int
    # Steps between checkpoints; 0 for none but the last.
    checkpoint_every: int
    # Whether to write checkpoints at all, where, and how many to keep.
    checkpoint: bool
    checkpoint_dir: str
    keep_checkpoints: int
    compile: bool
    # Peak FLOP/s of one GPU in the layout's precision, for MFU.
    peak_flops: float
    # cuda, or cpu for ranks on CPU cores over gloo.
    device: str
    # The checkpoint to resume from; empty to start afresh.
    resume_from: str = ""
    # Parameters of the model and of its adapters, and the model FLOPs
    # per token MFU is quoted in, as gpuflow's estimator counts them.
    params: int = 0
    adapter_params: int = 0
    flops_per_token: float = 0.0
    lora: Optional[LoRAConfig] = None
    # The weights to start from, in base_format (hf or checkpoint), and
    # whether to also save them with the adapters merged.
    base: str = ""
    base_format: str = ""
    merge: bool = False
    # Folders to export to: the model, the adapters, and where the
    # tokenizer files come from.
    export_hf: str = ""
    export_peft: str = ""
    export_tokenizer: str = ""
    # Loss masks beside the shards (PREFIX.mask), one per data prefix;
    # none to train on every token.
    masks: list[str] = field(default_factory=list)
    # Validation shard prefixes (none: no validation), the steps between
    # validations (0: only at the end) and the global batches each reads
    # (0: the trainer's default).
    valid_data: list[str] = field(default_factory=list)
    eval_every: int = 0
    eval_batches: int = 0
    # Where rank 0 writes TensorBoard event files; empty for none.
    tensorboard_dir: str = ""


@dataclass
class ChoicesFiles:
    # The questions as tokens in, each choice's log-likelihood out (JSONL).
    questions: str
    scores: str


@dataclass
class GenerateConfig:
    # The prompts as tokens in, the completions' tokens out (JSONL).
    prompts: str
    completions: str
    max_new_tokens: int
    # 0 picks the likeliest token; above 0 samples from the likeliest
    # tokens whose probability reaches top_p.
    temperature: float
    top_p: float
    # Token ids that end a completion.
    stop: list[int]


@dataclass
class EvalConfig:
    # The eval stage's address (eval.NAME).
    stage: str
    model: ModelConfig
    layout: Layout
    device: str
    seed: int
    # The weights to evaluate, in weights_format (hf or checkpoint); with
    # base, a LoRA fine-tune's adapters over the base model.
    weights: str
    weights_format: str
    base: str = ""
    base_format: str = ""
    # Megatron shard prefixes to measure loss on, and at most how many
    # tokens of them to read (0: all).
    data: list[str] = field(default_factory=list)
    max_tokens: int = 0
    choices: Optional[ChoicesFiles] = None
    generate: Optional[GenerateConfig] = None


def load(path, cls=RunConfig):
    """The config in the JSON file at path: a RunConfig, or cls."""
    with open(path) as f:
        try:
            raw = json.load(f)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path} is not JSON: {e}") from e
    return from_dict(cls, raw)


def from_dict(cls, raw, where="config"):
    """An instance of the dataclass cls from a JSON object, checked: no
    field unknown, none missing, each of its type."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object, not {_kind(raw)}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ConfigError(f"{where} has unknown field {', '.join(unknown)}; the trainer reads {', '.join(fields)}. "
                          "config.json comes from another version of gpuflow than this trainer")
    hints = typing.get_type_hints(cls)
    values = {}
    for name, f in fields.items():
        if name in raw:
            values[name] = _convert(hints[name], raw[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{where}.{name} is missing")
    return cls(**values)


_NAMES = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}


def _convert(tp, v, where):
    if typing.get_origin(tp) is typing.Union:
        if v is None:
            return None
        (tp,) = [a for a in typing.get_args(tp) if a is not type(None)]
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, v, where)
    if typing.get_origin(tp) is list:
        if not isinstance(v, list):
            raise ConfigError(f"{where} must be a list, not {_kind(v)}")
        (elem,) = typing.get_args(tp)
        return [_convert(elem, e, f"{where}[{i}]") for i, e in enumerate(v)]
    ok = {bool: lambda x: isinstance(x, bool),
          int: lambda x: isinstance(x, int) and not isinstance(x, bool),
          float: lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
          str: lambda x: isinstance(x, str)}[tp]
    if not ok(v):
        raise ConfigError(f"{where} must be {_NAMES[tp]}, not {_kind(v)} {json.dumps(v)}")
    return float(v) if tp is float else v


def _kind(v):
    if v is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}.get(type(v), type(v).__name__)
