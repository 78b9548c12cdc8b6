"""The layout on PyTorch's own parallelism: a device mesh in Megatron's rank
order (tp fastest, then dp, then pp), tensor parallelism with optional
sequence parallelism through DTensor, data parallelism through FSDP2
(fully_shard) with bf16 or fp16 compute (fp32 on CPU ranks) and fp32 reduction, and pipeline
parallelism through torch.distributed.pipelining (1F1B, or interleaved 1F1B
with vp > 1 model chunks per rank). One GPU alone runs the same mixed
precision without FSDP2 (compute_copy).

ZeRO stages map onto FSDP2: stage 0 replicates weights, gradients and
optimizer states over the data-parallel group (FSDP2's hybrid mode with
one-way sharding, which all-reduces gradients as DDP does); stages 1 and 2
shard all three and keep the gathered weights from the forward until the
backward is done; stage 3 (or fsdp = true) also frees them after the
forward and gathers them again for the backward.
"""

import contextlib
import copy
import inspect

import torch
import torch.nn.functional as F

import fp8tp
import model as M
from report import TrainerError


def build_mesh(layout, device_type="cuda"):
    """Dimensions pp, dp, dp_shard (always 1: a replica's own sharding in
    hybrid mode) and tp, in Megatron's rank order."""
    from torch.distributed.device_mesh import init_device_mesh
    return init_device_mesh(device_type, (layout.pp, layout.dp, 1, layout.tp), mesh_dim_names=("pp", "dp", "dp_shard", "tp"))


def data_parallel(mesh, layout):
    """The mesh FSDP2 spreads a model chunk over, and whether the gathered
    weights are freed after the forward, by ZeRO stage."""
    sharded = layout.fsdp or layout.zero >= 1
    if not sharded:
        return mesh["dp", "dp_shard"], False
    return mesh["dp"], layout.fsdp or layout.zero >= 3


def stage_ids(pp_rank, pp, vp):
    """The model chunks a pipeline rank holds: rank r runs r, r+pp, ..."""
    return [pp_rank + k * pp for k in range(vp)]


def chunk_layers(layers, pp, vp, first=0, last=0):
    """The layers of each model chunk in the model's order. Chunk c runs on
    pipeline rank c % pp, which holds `first` layers (rank 0), `last`
    (the last rank) or an even share of what they leave (zero: no count of
    its own), split evenly over the rank's vp chunks. A split that would
    drop or invent a layer (gpuflow's layout rules refuse it before the
    trainer starts; a config written by hand may not) is a TrainerError."""
    own = {0: first, pp - 1: last} if pp > 1 else {}
    own = {r: n for r, n in own.items() if n > 0}
    rest = (layers - sum(own.values())) // (pp - len(own)) if pp > len(own) else 0
    ranks = [own.get(r, rest) for r in range(pp)]
    if first < 0 or last < 0 or sum(ranks) != layers or min(ranks) < 1 or any(n % vp for n in ranks):
        raise TrainerError("Layers do not split over the pipeline",
                           f"{layers} layers on pp = {pp}, vp = {vp} with first_stage_layers = {first} and last_stage_layers = "
                           f"{last} give stages of {ranks} layers; every layer must sit on one stage, each stage hold at "
                           f"least one, and each stage's count divide by vp. Change the counts, pp or vp.")
    return [ranks[c % pp] // vp for c in range(pp * vp)]


def build_parts(args, layout, pp_rank, make_model):
    """One Transformer per model chunk this rank holds, on the meta device,
    trimmed to its layers; make_model builds the whole model."""
    pp, vp = layout.pp, layout.vp if layout.pp > 1 else 1
    with torch.device("meta"):
        whole = make_model(args)
    if pp == 1:
        return [(0, whole)], 1
    stages = pp * vp
    sizes = chunk_layers(args.layers, pp, vp, layout.first_stage_layers, layout.last_stage_layers)
    return [(s, M.keep_stage(copy.deepcopy(whole), s, stages, sizes)) for s in stage_ids(pp_rank, pp, vp)], stages


COLWISE = ("attention.q_proj", "attention.k_proj", "attention.v_proj", "feed_forward.gate_proj", "feed_forward.up_proj")
ROWWISE = ("attention.o_proj", "feed_forward.down_proj")


def block_linears(block):
    """The block's column- and row-parallel layers: GPT-2's MLP has no gate."""
    names = dict(block.named_modules())
    return tuple(n for n in COLWISE if n in names), tuple(n for n in ROWWISE if n in names)


def apply_tp(part, tp_mesh, sp):
    """Megatron-style tensor parallelism: q, k, v, gate and up split by
    columns, o and down by rows; with sequence parallelism the norms and the
    residual stream are split along the sequence between them. The logits
    stay split over the vocabulary (the loss is computed on the shards:
    xent.vocab_parallel on GPUs, vocab_parallel_loss on CPU ranks), also
    when the output projection is the tied embedding's weight, which the
    embedding splits by rows of the vocabulary already. GPT-2's position embedding is split by rows of
    positions as the token embedding is by rows of the vocabulary, and its
    output lands in the same layout. Column-parallel biases are split with
    their outputs, row-parallel ones kept whole and added once, after the
    reduction (PyTorch's ColwiseParallel and RowwiseParallel place them
    so). LoRA adapters are split with their base layers, and so are the
    frozen layers beside them (FrozenLinear, under fp8); fp8 layers by
    fp8tp."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)
    from lora import FrozenLinear
    between = Shard(1) if sp else Replicate()
    top = {}
    if part.tok_embeddings is not None:
        top["tok_embeddings"] = RowwiseParallel(input_layouts=Replicate(), output_layouts=between)
    if part.pos_embeddings is not None:
        top["pos_embeddings"] = RowwiseParallel(input_layouts=Replicate(), output_layouts=between)
    if part.norm is not None:
        if sp:
            top["norm"] = SequenceParallel()
        if part.output is not None:
            top["output"] = ColwiseParallel(input_layouts=between, output_layouts=Shard(-1), use_local_output=True)
    if top:
        parallelize_module(part, tp_mesh, top)
    if part.norm is not None and part.output is None:
        part.tied_logits = vocab_parallel_logits(part, tp_mesh, between)
    for block in part.layers.values():
        plan = {}
        colwise_names, rowwise_names = block_linears(block)
        fp8_block = fp8tp.converted(block, colwise_names + rowwise_names)
        if fp8_block:
            # fp8 layers split themselves and gather their inputs (fp8tp.py).
            fp8tp.parallelize(block, tp_mesh, colwise_names, rowwise_names, sp)
        else:
            for name in colwise_names + rowwise_names:
                module, colwise = block.get_submodule(name), name in colwise_names
                if isinstance(module, FrozenLinear):
                    shard_lora(module, tp_mesh, colwise, between)
                else:
                    plan[name] = ColwiseParallel() if colwise else RowwiseParallel(output_layouts=between)
        if sp:
            plan.update({"attention_norm": SequenceParallel(), "ffn_norm": SequenceParallel()})
        if sp and not fp8_block:
            plan.update({
                # Attention takes (x, rope, band, cache); only x is split.
                "attention": PrepareModuleInput(input_layouts=(Shard(1), None, None, None),
                                                desired_input_layouts=(Replicate(), None, None, None)),
                "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            })
        parallelize_module(block, tp_mesh, plan)


def vocab_parallel_logits(part, tp_mesh, between):
    """The tied output projection under tensor parallelism: the hidden
    states, gathered whole, times this rank's rows of the embedding (its
    share of the vocabulary), as ColwiseParallel computes an output layer."""
    from torch.distributed.tensor import DTensor, Replicate

    def logits(h):
        if not isinstance(h, DTensor):
            h = DTensor.from_local(h, tp_mesh, [between], run_check=False)
        return F.linear(h.redistribute(tp_mesh, [Replicate()]), part.tok_embeddings.weight).to_local()
    return logits


def shard_lora(module, tp_mesh, colwise, output):
    """Splits a LoRA layer as its base layer is split. Column-parallel (the
    output split): the base's rows and B's rows split, A whole on every
    rank. Row-parallel (the input split): the base's and A's columns split,
    B whole, and the partial sums of both paths reduced together. DTensor
    carries the rest: A's gradient under column parallelism, say, is
    summed over the ranks. A frozen layer without adapters (FrozenLinear)
    is split as its base layer alone."""
    from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
    from lora import LoRALinear
    split = Shard(0) if colwise else Shard(1)
    placements = {(module, "weight"): split, (module, "bias"): Shard(0) if colwise else Replicate()}
    if isinstance(module, LoRALinear):
        placements.update({(module.lora_a, "weight"): Replicate() if colwise else Shard(1),
                           (module.lora_b, "weight"): Shard(0) if colwise else Replicate()})
    for (owner, name), placement in placements.items():
        p = getattr(owner, name)
        if p is not None:
            owner.register_parameter(name, torch.nn.Parameter(distribute_tensor(p.data, tp_mesh, [placement]),
                                                              requires_grad=p.requires_grad))

    def inputs(_, args):
        x = args[0]
        wanted = Replicate() if colwise else Shard(x.ndim - 1)
        if isinstance(x, DTensor):
            return (x.redistribute(tp_mesh, [wanted]),) + args[1:]
        return (DTensor.from_local(x, tp_mesh, [wanted], run_check=False),) + args[1:]

    def outputs(_, args, y):
        # Column-parallel outputs are this rank's columns already.
        return (y if colwise else y.redistribute(tp_mesh, [output])).to_local()

    module.register_forward_pre_hook(inputs)
    module.register_forward_hook(outputs)


def apply_fsdp(part, dp_mesh, reshard, compute_dtype=torch.bfloat16):
    """compute_dtype is what the forward and backward run in (fp32 on CPU
    ranks); weights and gradient reductions stay fp32."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mp = MixedPrecisionPolicy(param_dtype=compute_dtype, reduce_dtype=torch.float32)
    for block in part.layers.values():
        fully_shard(block, mesh=dp_mesh, mp_policy=mp, reshard_after_forward=reshard)
    # The root holds the embeddings, final norm and output: used again at
    # once by the backward, so never resharded after the forward.
    fully_shard(part, mesh=dp_mesh, mp_policy=mp, reshard_after_forward=False)


def compute_dtype(precision, cpu):
    """What the forward and backward run in: fp16 for precision "fp16",
    else bf16 (fp8's products cast their own operands), fp32 on CPU ranks."""
    if cpu:
        return torch.float32
    return torch.float16 if precision == "fp16" else torch.bfloat16


def dtype_name(dtype):
    return {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}[dtype]


def one_gpu(layout, cpu):
    """Whether the trainer runs on one GPU alone, where FSDP2 would shard
    over a group of one: it then skips FSDP2 (compute_copy)."""
    return not cpu and layout.tp * layout.pp * layout.dp * layout.cp == 1


def compute_copy(part, compute_dtype=torch.bfloat16):
    """FSDP2's mixed precision on one GPU, without FSDP2: part keeps its
    fp32 weights (what the optimizer steps, checkpoints save and exports
    read) and runs its forward and backward on a copy of itself in
    compute_dtype. Before a forward the copy's weights are cast from
    part's where these changed since the last cast, as FSDP2 gathers
    them (the one-GPU AdamW writes them as it steps: adamw.py); as soon
    as a gradient of the copy is
    complete it is cast to fp32 and added to part's, as FSDP2's fp32
    reduction does, and the copy's is freed. FSDP2 on one GPU spent
    13.0 ms of a 275 ms step (the Llama-3.2-1B shape) on copies outside
    the compiled blocks and on flattening gradients for a reduction to
    itself; these casts take 5.4 ms, reading and writing each weight and
    gradient once (docs/benchmarks.md, "One-GPU speed without FSDP2").
    Returns the copy, whose blocks compile_blocks compiles; the copy is
    not a submodule of part, so part's parameter names and state stay as
    they were. part.compute_copies maps each weight to its copy's."""
    # Each parameter's copy is made empty in compute_dtype (filled by the
    # first forward) rather than copied in fp32 and then cast; a tied
    # weight stays one parameter in the copy.
    fresh = {id(p): torch.nn.Parameter(torch.empty_like(p, dtype=compute_dtype), requires_grad=p.requires_grad)
             for p in part.parameters()}
    low = copy.deepcopy(part, fresh)
    pairs = list(zip(low.parameters(), part.parameters()))
    for lp, hp in pairs:
        if hp.requires_grad:
            lp.register_post_accumulate_grad_hook(_gradient_to(hp))
    part.compute_copies = {hp: lp for lp, hp in pairs}
    # Each weight's storage and version counter when the copy was last
    # made: an in-place change (a load, PyTorch's optimizers) moves the
    # counter, new data (.data =, .to()) the storage;
    # adamw.CopyWritingAdamW's kernel, which writes the copy itself,
    # moves neither. Initialisation writing through .data moves neither
    # too, and comes before the first forward, which always copies. A
    # forward copies only when one moved, so the micro-batches of one
    # step and validations copy nothing again.
    synced = [None]

    def forward(*args, **kwargs):
        versions = [(hp.data_ptr(), hp._version) for _, hp in pairs]
        if versions != synced[0]:
            with torch.no_grad():
                torch._foreach_copy_([lp for lp, _ in pairs], [hp for _, hp in pairs])
            synced[0] = versions
        low.train(part.training)
        return low(*args, **kwargs)

    part.forward = forward
    return low


def _gradient_to(master):
    """A hook that moves a compute copy's gradient into master's, in
    master's precision, summed over micro-batches."""
    def move(p):
        if master.grad is None:
            master.grad = p.grad.to(master.dtype)
        else:
            master.grad.add_(p.grad)
        p.grad = None
    return move


def set_recompute(part, recompute):
    for block in part.layers.values():
        block.recompute = recompute


def compile_blocks(part):
    """Compiles each block's forward; FSDP2's hooks stay outside the
    compiled code, and parameter names do not change. A block the compiler
    cannot handle still trains, eagerly; the compiler's error goes to
    stderr."""
    torch._dynamo.config.suppress_errors = True
    for block in part.layers.values():
        block.forward = torch.compile(block.forward)


def cross_entropy(logits, labels):
    return F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))


def summed_cross_entropy(logits, labels):
    """The token losses summed, labels of -100 (data.IGNORE, outside the
    loss mask) left out: their logits get no gradient."""
    return F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1), ignore_index=-100, reduction="sum")


def vocab_parallel_loss(tp_mesh, reduction="mean"):
    """The loss on logits split over the vocabulary (this rank's columns),
    on CPU ranks (GPUs use xent.vocab_parallel):
    PyTorch's loss parallelism reduces the softmax's maximum and sum over
    the ranks instead of gathering the logits. The forward and backward
    run inside loss_context. With reduction "sum" it is
    summed_cross_entropy on the shards: labels of -100 left out, their
    logits' shards get no gradient."""
    from torch.distributed.tensor import DTensor, Shard

    def loss(logits, labels):
        split = DTensor.from_local(logits, tp_mesh, [Shard(logits.ndim - 1)], run_check=False)
        out = F.cross_entropy(split.flatten(0, 1).float(), labels.flatten(0, 1), ignore_index=-100, reduction=reduction)
        return out.full_tensor() if isinstance(out, DTensor) else out
    return loss


class MaskedPipelineLoss:
    """The masked loss as a pipeline schedule's loss function: the schedule
    hands the last stage each micro-batch's labels (IGNORE outside the loss
    mask) as it hands them without masks, and this sums the micro-batch's
    token losses times the step's scale (set before each step: what makes
    the sum a mean over the global batch's trained tokens), times the
    micro-batches, which the schedule's gradient averaging divides out."""

    def __init__(self, summed, n_microbatches):
        self.summed, self.n_microbatches, self.scale = summed, n_microbatches, None

    def __call__(self, logits, labels):
        return self.summed(logits, labels) * (self.scale * self.n_microbatches)


def loss_context(dtensor_loss):
    """Loss parallelism's context where the loss runs on DTensor shards
    (vocab_parallel_loss), else none."""
    if not dtensor_loss:
        return contextlib.nullcontext()
    from torch.distributed.tensor.parallel import loss_parallel
    return loss_parallel()


class TiedStages:
    """A tied embedding under pipeline parallelism: the first stage looks
    tokens up in it and the last projects onto the vocabulary with it, each
    with its own copy (model.keep_stage). The copies start equal (the first
    stage's is sent to the last) and stay equal: after each backward the two
    stages' ranks at the same data- and tensor-parallel place sum their
    gradients, which is the gradient of the one weight, and the optimizer
    steps both alike. Every rank builds it (creating process groups is
    collective); ranks of the middle stages hold no copy."""

    def __init__(self, mesh, parts, stage_ids, stages):
        import torch.distributed as dist
        ranks, me = mesh.mesh, dist.get_rank()
        self.group, self.src, self.weight, self.copy = None, None, None, False
        for d in range(ranks.shape[1]):
            for t in range(ranks.shape[3]):
                pair = [int(ranks[0, d, 0, t]), int(ranks[-1, d, 0, t])]
                g = dist.new_group(pair)
                if me in pair:
                    self.group, self.src = g, pair[0]
        for s, part in zip(stage_ids, parts):
            if s in (0, stages - 1) and part.tok_embeddings is not None:
                self.weight, self.copy = part.tok_embeddings.weight, s != 0

    @staticmethod
    def _local(t):
        from torch.distributed.tensor import DTensor
        return t.to_local() if isinstance(t, DTensor) else t

    @torch.no_grad()
    def sync_weights(self):
        import torch.distributed as dist
        if self.weight is not None:
            dist.broadcast(self._local(self.weight), src=self.src, group=self.group)

    @torch.no_grad()
    def sync_grads(self):
        import torch.distributed as dist
        if self.weight is not None and self.weight.grad is not None:
            dist.all_reduce(self._local(self.weight.grad), group=self.group)

    def is_copy(self, p):
        """Whether p is the last stage's copy, whose gradient the first
        stage's already counts in the gradient norm."""
        return self.copy and p is self.weight


def pipeline_schedule(stages, n_microbatches, loss_fn):
    """1F1B with one chunk per rank, interleaved 1F1B with several. Gradients
    are averaged over micro-batches, as without a pipeline."""
    from torch.distributed.pipelining import Schedule1F1B, ScheduleInterleaved1F1B
    cls = Schedule1F1B if len(stages) == 1 else ScheduleInterleaved1F1B
    target = stages[0] if len(stages) == 1 else stages
    if "scale_grads" in inspect.signature(cls.__init__).parameters:
        return cls(target, n_microbatches=n_microbatches, loss_fn=loss_fn, scale_grads=True), 1.0
    # Older schedules sum micro-batch gradients: scale the loss instead.
    return cls(target, n_microbatches=n_microbatches, loss_fn=lambda o, t: loss_fn(o, t) / n_microbatches), float(n_microbatches)
