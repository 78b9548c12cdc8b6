"""The layout on PyTorch's own parallelism: a device mesh in Megatron's rank
order (tp fastest, then dp, then pp), tensor parallelism with optional
sequence parallelism through DTensor, data parallelism through FSDP2
(fully_shard) with bf16 compute (fp32 on CPU ranks) and fp32 reduction, and pipeline
parallelism through torch.distributed.pipelining (1F1B, or interleaved 1F1B
with vp > 1 model chunks per rank).

ZeRO stages map onto FSDP2: stage 0 replicates weights, gradients and
optimizer states over the data-parallel group (FSDP2's hybrid mode with
one-way sharding, which all-reduces gradients as DDP does); stages 1 and 2
shard all three and keep the gathered weights from the forward until the
backward is done; stage 3 (or fsdp = true) also frees them after the
forward and gathers them again for the backward.
"""

import copy
import inspect

import torch
import torch.nn.functional as F

import model as M


def build_mesh(layout, device_type="cuda"):
    """Dimensions pp, dp, dp_shard (always 1: a replica's own sharding in
    hybrid mode) and tp, in Megatron's rank order."""
    from torch.distributed.device_mesh import init_device_mesh
    return init_device_mesh(device_type, (layout["pp"], layout["dp"], 1, layout["tp"]), mesh_dim_names=("pp", "dp", "dp_shard", "tp"))


def data_parallel(mesh, layout):
    """The mesh FSDP2 spreads a model chunk over, and whether the gathered
    weights are freed after the forward, by ZeRO stage."""
    sharded = layout.get("fsdp", False) or layout.get("zero", 0) >= 1
    if not sharded:
        return mesh["dp", "dp_shard"], False
    return mesh["dp"], layout.get("fsdp", False) or layout.get("zero", 0) >= 3


def stage_ids(pp_rank, pp, vp):
    """The model chunks a pipeline rank holds: rank r runs r, r+pp, ..."""
    return [pp_rank + k * pp for k in range(vp)]


def build_parts(args, layout, pp_rank, make_model):
    """One Transformer per model chunk this rank holds, on the meta device,
    trimmed to its layers; make_model builds the whole model."""
    pp, vp = layout["pp"], layout["vp"] if layout["pp"] > 1 else 1
    with torch.device("meta"):
        whole = make_model(args)
    if pp == 1:
        return [(0, whole)], 1
    stages = pp * vp
    return [(s, M.keep_stage(copy.deepcopy(whole), s, stages)) for s in stage_ids(pp_rank, pp, vp)], stages


def apply_tp(part, tp_mesh, sp):
    """Megatron-style tensor parallelism: q, k, v, gate and up split by
    columns, o and down by rows; with sequence parallelism the norms and the
    residual stream are split along the sequence between them."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)
    between = Shard(1) if sp else Replicate()
    top = {}
    if part.tok_embeddings is not None:
        top["tok_embeddings"] = RowwiseParallel(input_layouts=Replicate(), output_layouts=between)
    if part.norm is not None:
        if sp:
            top["norm"] = SequenceParallel()
        top["output"] = ColwiseParallel(input_layouts=between, output_layouts=Replicate(), use_local_output=True)
    if top:
        parallelize_module(part, tp_mesh, top)
    for block in part.layers.values():
        plan = {
            "attention.q_proj": ColwiseParallel(),
            "attention.k_proj": ColwiseParallel(),
            "attention.v_proj": ColwiseParallel(),
            "attention.o_proj": RowwiseParallel(output_layouts=between),
            "feed_forward.gate_proj": ColwiseParallel(),
            "feed_forward.up_proj": ColwiseParallel(),
            "feed_forward.down_proj": RowwiseParallel(output_layouts=between),
        }
        if sp:
            plan.update({
                "attention_norm": SequenceParallel(),
                "ffn_norm": SequenceParallel(),
                "attention": PrepareModuleInput(input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None)),
                "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            })
        parallelize_module(block, tp_mesh, plan)


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


def set_recompute(part, recompute):
    for block in part.layers.values():
        block.recompute = recompute


def compile_blocks(part):
    """Compiles each block's forward; FSDP2's hooks stay outside the
    compiled code, and parameter names do not change."""
    for block in part.layers.values():
        block.forward = torch.compile(block.forward)


def cross_entropy(logits, labels):
    return F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))


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
