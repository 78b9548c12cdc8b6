"""fp8 linear layers under tensor parallelism, with or without sequence
parallelism: fp8.py's products and tensorwise scaling on split weights.

A split tensor is scaled as the whole tensor is: each rank takes the
absolute maximum of its shard and the tensor-parallel group all-reduces
the maxima (MAX), as torchao's float8 tensor parallelism does, so every
rank casts its shard with the scale one process would take for the whole
tensor and holds exactly that process's fp8 values. The products then
differ from one process's only in the order of their sums. The all-reduce
carries one number per tensor.

Column-parallel layers (q, k, v, gate, up) hold a block of the weight's
rows and take the whole input; row-parallel layers (o, down) hold a block
of its columns, take their slice of the input features and sum their
partial outputs over the group. Around them, per attention and per MLP:

- without sequence parallelism the module's input is whole on every rank:
  its gradient, a partial sum on each rank, is all-reduced once for the
  module (not once per layer), and the row-parallel output is all-reduced;
- with sequence parallelism each rank holds a slice of the sequence. The
  module's input is cast to e4m3 once and all-gathered in fp8 (half the
  bytes of bf16), then turned back into the compute precision for q, k
  and v (gate and up) to share: their own cast gives back the same fp8
  values, which lie on the fp8 grid already under the same maximum (the
  scale taken again from that copy matches to the compute precision's
  rounding). Its
  gradient is reduce-scattered, and the row-parallel output
  reduce-scattered along the sequence, in the compute precision, since
  they are sums; the row-parallel layer's output gradient is
  all-gathered in e5m2 for its backward products.

The weights stay DTensors split as PyTorch's ColwiseParallel and
RowwiseParallel split them, so FSDP, the optimizer, checkpoints and
exports see the same parameters under the same names.
"""

import torch
import torch.distributed._functional_collectives as funcol
import torch.nn as nn
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

import fp8


def _wait(t):
    return t.wait() if isinstance(t, funcol.AsyncCollectiveTensor) else t


def _group_amax(t, mesh):
    """The whole tensor's absolute maximum from this rank's shard t."""
    return _wait(funcol.all_reduce(fp8._amax(t), "max", mesh))


def _gather(t, dim, mesh):
    """Shards along dim put together; fp8 travels as its bytes."""
    if t.element_size() == 1 and t.dtype.is_floating_point:
        return _wait(funcol.all_gather_tensor(t.view(torch.uint8), dim, mesh)).view(t.dtype)
    return _wait(funcol.all_gather_tensor(t, dim, mesh))


def _reduce_scatter(t, dim, mesh):
    return _wait(funcol.reduce_scatter_tensor(t.contiguous(), "sum", dim, mesh))


def _all_reduce(t, mesh):
    return _wait(funcol.all_reduce(t.contiguous(), "sum", mesh))


class _SequenceGather(torch.autograd.Function):
    """A module's input under sequence parallelism: this rank's slice of the
    sequence in, the whole sequence out, gathered in e4m3."""

    @staticmethod
    def forward(ctx, x, mesh):
        ctx.mesh = mesh
        xq, inv = fp8._quantize(x, fp8.E4M3, _group_amax(x, mesh))
        return (_gather(xq, 1, mesh).float() * inv).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return _reduce_scatter(grad, 1, ctx.mesh), None


class _ReplicatedInput(torch.autograd.Function):
    """A module's input without sequence parallelism: whole on every rank;
    its gradient is summed over the ranks' column blocks."""

    @staticmethod
    def forward(ctx, x, mesh):
        ctx.mesh = mesh
        return x

    @staticmethod
    def backward(ctx, grad):
        return _all_reduce(grad, ctx.mesh), None


def _products_backward(gq, gs, xq, xs, wq, ws, dtype):
    """The input's and the weight's gradients of out = x w^T, from fp8
    operands (fp8.py's backward products)."""
    grad_x = torch._scaled_mm(gq, fp8._col_major(wq), scale_a=gs, scale_b=ws, out_dtype=dtype)
    grad_w = torch._scaled_mm(gq.t().contiguous(), fp8._col_major(xq), scale_a=gs, scale_b=xs, out_dtype=dtype)
    return grad_x, grad_w


class _ColwiseFP8(torch.autograd.Function):
    """x (whole) times this rank's rows of the weight: this rank's output
    columns. The input's gradient is a partial sum, which the module's
    input (_SequenceGather or _ReplicatedInput) reduces."""

    @staticmethod
    def forward(ctx, x, weight, mesh):
        x2 = x.reshape(-1, x.shape[-1])
        xq, xs = fp8._quantize(x2, fp8.E4M3)
        wq, ws = fp8._quantize(weight, fp8.E4M3, _group_amax(weight, mesh))
        out = torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=x.dtype)
        ctx.save_for_backward(xq, xs, wq, ws)
        ctx.mesh, ctx.x_shape = mesh, x.shape
        return out.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_out):
        xq, xs, wq, ws = ctx.saved_tensors
        g = grad_out.reshape(-1, grad_out.shape[-1])
        gq, gs = fp8._quantize(g, fp8.E5M2, _group_amax(g, ctx.mesh))
        grad_x, grad_w = _products_backward(gq, gs, xq, xs, wq, ws, grad_out.dtype)
        return grad_x.reshape(ctx.x_shape), grad_w, None


class _RowwiseFP8(torch.autograd.Function):
    """This rank's input features times its columns of the weight: a
    partial output, summed over the ranks (reduce-scattered along the
    sequence under sequence parallelism)."""

    @staticmethod
    def forward(ctx, x, weight, mesh, sp):
        x2 = x.reshape(-1, x.shape[-1])
        xq, xs = fp8._quantize(x2, fp8.E4M3, _group_amax(x2, mesh))
        wq, ws = fp8._quantize(weight, fp8.E4M3, _group_amax(weight, mesh))
        out = torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=x.dtype)
        out = out.reshape(*x.shape[:-1], weight.shape[0])
        ctx.save_for_backward(xq, xs, wq, ws)
        ctx.mesh, ctx.sp, ctx.x_shape = mesh, sp, x.shape
        return _reduce_scatter(out, 1, mesh) if sp else _all_reduce(out, mesh)

    @staticmethod
    def backward(ctx, grad_out):
        xq, xs, wq, ws = ctx.saved_tensors
        mesh = ctx.mesh
        if ctx.sp:
            gq, gs = fp8._quantize(grad_out, fp8.E5M2, _group_amax(grad_out, mesh))
            gq = _gather(gq, 1, mesh)
        else:
            gq, gs = fp8._quantize(grad_out, fp8.E5M2)
        gq = gq.reshape(-1, gq.shape[-1])
        grad_x, grad_w = _products_backward(gq, gs, xq, xs, wq, ws, grad_out.dtype)
        return grad_x.reshape(ctx.x_shape), grad_w, None, None


class Float8ParallelLinear(nn.Module):
    """A Float8Linear split over the tensor-parallel mesh: by rows of the
    weight (colwise) or by its columns."""

    def __init__(self, linear, mesh, colwise, sp):
        super().__init__()
        split = Shard(0) if colwise else Shard(1)
        self.weight = nn.Parameter(distribute_tensor(linear.weight.data, mesh, [split]), requires_grad=linear.weight.requires_grad)
        self.bias = None
        if linear.bias is not None:
            # As ColwiseParallel and RowwiseParallel place a bias: split
            # with the output features, or whole beside a summed output.
            place = Shard(0) if colwise else Replicate()
            self.bias = nn.Parameter(distribute_tensor(linear.bias.data, mesh, [place]), requires_grad=linear.bias.requires_grad)
        self.mesh, self.colwise, self.sp = mesh, colwise, sp

    def forward(self, x):
        w = self.weight.to_local()
        if self.colwise:
            out = _ColwiseFP8.apply(x, w, self.mesh)
        else:
            out = _RowwiseFP8.apply(x, w, self.mesh, self.sp)
        if self.bias is None:
            return out
        b = self.bias.to_local().to(out.dtype)
        if self.colwise or not self.sp:
            return out + b
        return _SequenceShardBias.apply(out, b, self.mesh)


class _SequenceShardBias(torch.autograd.Function):
    """A row-parallel layer's whole bias added to this rank's slice of the
    sequence: its gradient, summed over this slice only, is summed over
    the group, so every rank holds the whole sequence's gradient as one
    process would."""

    @staticmethod
    def forward(ctx, out, bias, mesh):
        ctx.mesh = mesh
        return out + bias

    @staticmethod
    def backward(ctx, grad):
        grad_b = grad.reshape(-1, grad.shape[-1]).sum(0)
        return grad, _all_reduce(grad_b, ctx.mesh), None


def converted(block, names):
    return any(isinstance(block.get_submodule(n), fp8.Float8Linear) for n in names)


def parallelize(block, mesh, colwise, rowwise, sp):
    """Splits a block's fp8 layers (colwise and rowwise name them) and
    prepares the attention's and MLP's inputs; the norms between them are
    parallel.apply_tp's, as for any block."""
    for name in colwise + rowwise:
        parent, _, leaf = name.rpartition(".")
        owner = block.get_submodule(parent)
        setattr(owner, leaf, Float8ParallelLinear(getattr(owner, leaf), mesh, name in colwise, sp))
    for name in {n.rpartition(".")[0] for n in colwise}:
        block.get_submodule(name).register_forward_pre_hook(_input_hook(mesh, sp))


def _input_hook(mesh, sp):
    def hook(_, args):
        x = args[0]
        if isinstance(x, DTensor):
            x = x.to_local()
        x = _SequenceGather.apply(x, mesh) if sp else _ReplicatedInput.apply(x, mesh)
        return (x,) + tuple(args[1:])
    return hook


class _FrozenSplitFP8(torch.autograd.Function):
    """A frozen weight's split product (a LoRA base layer's under tensor
    parallelism): this rank's block of x w^T and, in the backward, of the
    input's gradient, no weight gradient. colwise: x whole, this rank's
    rows of w, its output columns; the output's gradient is split by
    columns and scaled by the whole gradient's maximum, the input's
    gradient a partial sum. Rowwise: this rank's input features and
    columns of w, scaled by the whole tensors' maxima, a partial output;
    the output's gradient comes whole. The collectives around the product
    are DTensor's (parallel.shard_lora)."""

    @staticmethod
    def forward(ctx, x, weight, w_amax, mesh, colwise):
        x2 = x.reshape(-1, x.shape[-1])
        x_amax = fp8._amax(x2) if colwise else _group_amax(x2, mesh)
        out = fp8.frozen_forward(x2, weight, x_amax, w_amax)
        ctx.save_for_backward(weight, w_amax)
        ctx.mesh, ctx.colwise, ctx.x_shape = mesh, colwise, x.shape
        return out.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_out):
        weight, w_amax = ctx.saved_tensors
        g = grad_out.reshape(-1, grad_out.shape[-1])
        g_amax = _group_amax(g, ctx.mesh) if ctx.colwise else fp8._amax(g)
        return fp8.frozen_input_grad(g, weight, g_amax, w_amax).reshape(ctx.x_shape), None, None, None, None


def frozen_amax(x, weight):
    """A split frozen weight's whole absolute maximum: its shard's,
    all-reduced (MAX) over x's mesh, the same on every rank."""
    return _group_amax(weight.to_local(), x.device_mesh)


def frozen_linear(x, weight, bias, w_amax=None):
    """A frozen layer's x w^T + b in fp8 on DTensors as parallel.shard_lora
    places them: x whole (colwise) or split by features (rowwise), w split
    by rows or columns. The result is what F.linear gives on them, split
    by output columns or a partial sum, so the adapters' output adds to
    it and DTensor reduces both together. w_amax is frozen_amax's where the
    caller keeps it, else taken here."""
    mesh = x.device_mesh
    if w_amax is None:
        w_amax = frozen_amax(x, weight)
    colwise = weight.placements[-1] == Shard(0)
    if colwise:
        # Each rank's input gradient is its columns' share: a partial sum.
        local = _FrozenSplitFP8.apply(x.to_local(grad_placements=[Partial()]), weight.to_local(), w_amax, mesh, True)
        out = DTensor.from_local(local, mesh, [Shard(local.ndim - 1)], run_check=False)
    else:
        local = _FrozenSplitFP8.apply(x.to_local(), weight.to_local(), w_amax, mesh, False)
        out = DTensor.from_local(local, mesh, [Partial()], run_check=False)
    return out if bias is None else out + bias.to(out.dtype)
