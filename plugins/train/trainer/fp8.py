"""fp8 linear layers on Hopper and later: each matrix product of forward and
backward runs on the fp8 tensor cores through torch._scaled_mm (on CPU
ranks, PyTorch's CPU kernel of the same operator), with one
scale per tensor taken from its current absolute maximum (dynamic scaling).
Inputs and weights are cast to e4m3, gradients to e5m2; results come back in
the input's precision and the weights stay in their training precision, so
only the products are in fp8.

A frozen weight (LoRA's base layers, frozen_linear) has no gradient: its
layer runs the forward product and the input's gradient alone, and keeps
for the backward only the weight it holds anyway and its scale, not an
fp8 copy of it nor the input. Its maximum never changes, so its layer
(lora.FrozenLinear) takes it once and hands it in.
"""

import torch
import torch.nn as nn

E4M3 = torch.float8_e4m3fn
E5M2 = torch.float8_e5m2


def supported(device):
    """fp8 products need compute capability 8.9 or later on a GPU; PyTorch
    runs torch._scaled_mm on the CPU too, far slower than fp32, which is
    enough to check an fp8 layout on CPU ranks before it takes GPUs."""
    if not hasattr(torch, "_scaled_mm"):
        return False
    if device.type == "cpu":
        return True
    return torch.cuda.is_available() and torch.cuda.get_device_capability(device) >= (8, 9)


def _amax(t):
    return t.detach().abs().max().float()


def _quantize(t, dtype, amax=None):
    """t scaled into dtype's range, and the inverse scale _scaled_mm wants.
    amax, when given, is the whole tensor's absolute maximum where t is one
    shard of it (fp8tp.py), so every shard takes the whole tensor's scale."""
    fmax = torch.finfo(dtype).max
    amax = (_amax(t) if amax is None else amax).clamp(min=1e-12)
    scale = fmax / amax
    return (t.float() * scale).clamp(-fmax, fmax).to(dtype), scale.reciprocal()


def _col_major(t):
    """The same matrix laid out column-major, as _scaled_mm's second operand must be."""
    return t.t().contiguous().t()


class _FP8Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        x2 = x.reshape(-1, x.shape[-1])
        xq, xs = _quantize(x2, E4M3)
        wq, ws = _quantize(weight, E4M3)
        out = torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=x.dtype)
        ctx.save_for_backward(xq, xs, wq, ws)
        ctx.x_shape = x.shape
        return out.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_out):
        xq, xs, wq, ws = ctx.saved_tensors
        g = grad_out.reshape(-1, grad_out.shape[-1])
        gq, gs = _quantize(g, E5M2)
        grad_x = torch._scaled_mm(gq, _col_major(wq), scale_a=gs, scale_b=ws, out_dtype=grad_out.dtype)
        grad_w = torch._scaled_mm(gq.t().contiguous(), _col_major(xq), scale_a=gs, scale_b=xs, out_dtype=grad_out.dtype)
        return grad_x.reshape(ctx.x_shape), grad_w


def frozen_forward(x2, weight, x_amax, w_amax):
    """x2 (tokens x in) times a frozen weight's transpose in fp8, scaled by
    the given maxima (the whole tensors' under tensor parallelism)."""
    xq, xs = _quantize(x2, E4M3, x_amax)
    wq, ws = _quantize(weight, E4M3, w_amax)
    return torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=x2.dtype)


def frozen_input_grad(g, weight, g_amax, w_amax):
    """The input's gradient of x w^T from the output's gradient g (tokens x
    out): the weight is cast again under the forward's maximum, to the
    forward's fp8 values."""
    gq, gs = _quantize(g, E5M2, g_amax)
    wq, ws = _quantize(weight, E4M3, w_amax)
    return torch._scaled_mm(gq, _col_major(wq), scale_a=gs, scale_b=ws, out_dtype=g.dtype)


class _FrozenFP8Linear(torch.autograd.Function):
    """x w^T for a weight that trains not: the forward product and, in the
    backward, the input's gradient only. The saved tensors are the weight,
    which the layer holds whether or not it is saved, and its maximum:
    keeping its fp8 copy instead would hold one byte per frozen weight from
    each layer's forward to its backward."""

    @staticmethod
    def forward(ctx, x, weight, w_amax):
        x2 = x.reshape(-1, x.shape[-1])
        out = frozen_forward(x2, weight, _amax(x2), w_amax)
        ctx.save_for_backward(weight, w_amax)
        ctx.x_shape = x.shape
        return out.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_out):
        weight, w_amax = ctx.saved_tensors
        g = grad_out.reshape(-1, grad_out.shape[-1])
        return frozen_input_grad(g, weight, _amax(g), w_amax).reshape(ctx.x_shape), None, None


def frozen_linear(x, weight, w_amax=None):
    """x w^T in fp8 for a frozen weight (no weight gradient); w_amax is the
    weight's absolute maximum where the caller keeps it, else taken here."""
    if weight.requires_grad:
        raise ValueError("frozen_linear takes a frozen weight; a trained one needs Float8Linear's weight gradient")
    return _FrozenFP8Linear.apply(x, weight, _amax(weight) if w_amax is None else w_amax)


class Float8Linear(nn.Linear):
    """nn.Linear whose products run in fp8; the weight and bias keep their
    names. The bias is added in the compute precision after the product,
    as torchao's float8 linear adds it."""

    def forward(self, x):
        out = _FP8Linear.apply(x, self.weight)
        return out if self.bias is None else out + self.bias.to(out.dtype)


def convert(model, names=("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")):
    """Replaces the blocks' linear layers (not the output head) by
    Float8Linear, on the meta device before initialisation; a layer's bias
    (q, k and v in Qwen2) stays."""
    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if name in names and type(child) is nn.Linear:
                setattr(parent, name, Float8Linear(child.in_features, child.out_features, bias=child.bias is not None, device=child.weight.device))
                swapped += 1
    return swapped
