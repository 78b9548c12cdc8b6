"""AdamW on one GPU that also writes the compute copy's weights.

On one GPU the trainer keeps fp32 weights and runs the forward and
backward on a bf16 (or fp16) copy of them (parallel.compute_copy). With
PyTorch's fused AdamW a step then reads and writes every weight and
moment (AdamW, 28 bytes a parameter) and, before the next forward, reads
every fp32 weight again to write its copy (6 bytes). At the
Llama-3.2-1B shape on an H200 the step's multi-tensor kernels (fused
AdamW and the gradient norm) took 15.4 ms of a 502 ms step, AdamW at
about half the memory bandwidth (docs/benchmarks.md). Here one Triton
kernel per parameter does AdamW's update and writes the copy's weight
from the updated fp32 value in the same pass: 30 bytes a parameter, read
and written once (9.6 ms, and 1.5 ms for the norm and step counts).

The update is torch.optim.AdamW's (decoupled weight decay, bias
corrections from a step count kept on the device), and so are its state
(exp_avg, exp_avg_sq and a float32 step tensor per parameter, as fused
AdamW keeps them), its state_dict and the grad_scale and found_inf
attributes the trainer sets for clipping and fp16 loss scaling: a
gradient is divided by grad_scale as it is read, and a step whose
found_inf is set changes nothing (the step count included). Its
param_groups record fused = True, so that a checkpoint of one loads into
the other and a run resumed on several GPUs steps fused there too. What
differs: the gradients are left as they were (fused AdamW writes them
back unscaled; the trainer frees them after the step), amsgrad and
maximize are refused, and the bias corrections are taken in fp32 where
fused AdamW takes them in double.
"""

import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _adamw(p_ptr, g_ptr, m_ptr, v_ptr, low_ptr, step_ptr, scale_ptr, inf_ptr, n, lr, beta1, beta2, eps, decay,
           HAS_SCALE: tl.constexpr, HAS_INF: tl.constexpr, BLOCK: tl.constexpr):
    step = tl.load(step_ptr)
    # Bias corrections, as PyTorch's: 1 - beta ** step.
    correction1 = 1 - tl.exp2(step * tl.log2(beta1))
    correction2 = 1 - tl.exp2(step * tl.log2(beta2))
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    if HAS_INF:
        # A step whose gradients overflowed writes nothing.
        inside = inside & (tl.load(inf_ptr) == 0)
    p = tl.load(p_ptr + offsets, mask=inside)
    g = tl.load(g_ptr + offsets, mask=inside).to(tl.float32)
    m = tl.load(m_ptr + offsets, mask=inside)
    v = tl.load(v_ptr + offsets, mask=inside)
    if HAS_SCALE:
        g = g / tl.load(scale_ptr)
    p = p * (1 - lr * decay)
    m = m + (1 - beta1) * (g - m)
    v = beta2 * v + (1 - beta2) * g * g
    denom = tl.sqrt(v) / tl.sqrt(correction2) + eps
    p = p - (lr / correction1) * (m / denom)
    tl.store(p_ptr + offsets, p, mask=inside)
    tl.store(m_ptr + offsets, m, mask=inside)
    tl.store(v_ptr + offsets, v, mask=inside)
    tl.store(low_ptr + offsets, p.to(low_ptr.dtype.element_ty), mask=inside)


class CopyWritingAdamW(torch.optim.AdamW):
    """torch.optim.AdamW over the fp32 weights of a compute copy, whose step
    also writes each weight's copy (copies: parameter -> its copy, as
    parallel.compute_copy pairs them). Every parameter and its copy are
    contiguous and on one GPU. The kernel's writes leave the weights'
    version counters as they were, so the copy's next forward finds them
    in step and copies nothing."""

    def __init__(self, params, copies, **kwargs):
        super().__init__(params, fused=True, **kwargs)
        for group in self.param_groups:
            if group["amsgrad"] or group["maximize"]:
                raise ValueError("CopyWritingAdamW steps plain AdamW: no amsgrad, no maximize")
            for p in group["params"]:
                if p not in copies or not p.is_contiguous() or not copies[p].is_contiguous() or p.device.type != "cuda":
                    raise ValueError("CopyWritingAdamW steps contiguous GPU weights of a compute copy, each with its copy")
        self.copies = copies

    @torch.no_grad()
    def step(self, closure=None):
        if closure is not None:
            raise ValueError("CopyWritingAdamW takes no closure")
        scale = getattr(self, "grad_scale", None)
        found = getattr(self, "found_inf", None)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            steps = [self._state(p)["step"] for p in params]
            # On the device, as fused AdamW counts: nothing waits for the
            # host, and a skipped step is taken back.
            torch._foreach_add_(steps, 1.0)
            for p, step in zip(params, steps):
                state = self.state[p]
                n = p.numel()
                _adamw[(triton.cdiv(n, BLOCK),)](
                    p, p.grad.contiguous(), state["exp_avg"], state["exp_avg_sq"], self.copies[p], step,
                    scale if scale is not None else step, found if found is not None else step, n,
                    float(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                    HAS_SCALE=scale is not None, HAS_INF=found is not None, BLOCK=BLOCK, num_warps=8)
            if found is not None:
                torch._foreach_sub_(steps, [found.float()] * len(steps))
        return None

    def _state(self, p):
        state = self.state[p]
        if not state:
            state["step"] = torch.zeros((), dtype=torch.float32, device=p.device)
            state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        return state
