"""LoRA: low-rank adapters beside frozen linear layers (Hu et al., 2021).

A LoRALinear keeps the base layer's weight under its own name, so a
pretrain checkpoint loads into it unchanged, and adds lora_a (rank x in,
trained from a small uniform start) and lora_b (out x rank, starting at
zero, so training starts from the base model exactly). The output is
W x + (alpha / rank) * B A dropout(x).

Under precision fp8 the frozen base's product W x runs in fp8
(fp8.frozen_linear; fp8tp.frozen_linear under tensor parallelism): its
forward and its input's gradient, no weight gradient, while the adapters
and the biases stay in the compute precision (QLoRA's split, with fp8
for the frozen weights). The layers without adapters become
FrozenLinear, so every block product runs in fp8 as it does without
LoRA. The weights keep their precision and names: checkpoints, merges
and exports are those of a bf16 run.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.tensor import DTensor

import fp8 as FP8
import fp8tp

# Accepted target names: Hugging Face's and the estimator's short ones.
ALIASES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj",
           "gate": "gate_proj", "up": "up_proj", "down": "down_proj"}
ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class FrozenLinear(nn.Module):
    """A frozen linear layer under nn.Linear's parameter names, its product
    in fp8 when fp8 is set, else F.linear's."""

    def __init__(self, base: nn.Linear, fp8=False):
        super().__init__()
        self.in_features, self.out_features = base.in_features, base.out_features
        self.weight = base.weight
        self.weight.requires_grad_(False)
        self.bias = base.bias  # Qwen2's q, k and v have one; frozen with the weight
        if self.bias is not None:
            self.bias.requires_grad_(False)
        self.fp8 = fp8
        self.w_amax = None  # the weight's absolute maximum under fp8, once taken

    def frozen(self, x):
        if not self.fp8:
            return F.linear(x, self.weight, self.bias)
        if isinstance(self.weight, DTensor):
            return fp8tp.frozen_linear(x, self.weight, self.bias, self._weight_amax(x))
        out = FP8.frozen_linear(x, self.weight, self._weight_amax(x))
        return out if self.bias is None else out + self.bias.to(out.dtype)

    def _weight_amax(self, x):
        """The weight's absolute maximum for its fp8 scale, taken on the
        first product and kept: a frozen weight never changes, and
        merge_into_base, which changes it, drops the kept one. Under tensor
        parallelism it is the whole weight's, all-reduced over the group,
        so every rank keeps the same. None (taken per product) while the
        weight trains."""
        w = self.weight
        if w.requires_grad:
            return None
        if self.w_amax is None:
            self.w_amax = fp8tp.frozen_amax(x, w) if isinstance(w, DTensor) else FP8._amax(w)
        return self.w_amax

    def forward(self, x):
        return self.frozen(x)


class LoRALinear(FrozenLinear):
    def __init__(self, base: nn.Linear, rank, alpha, dropout, fp8=False):
        super().__init__(base, fp8)
        device = base.weight.device
        self.lora_a = nn.Linear(self.in_features, rank, bias=False, device=device)
        self.lora_b = nn.Linear(rank, self.out_features, bias=False, device=device)
        self.scale = alpha / rank
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x):
        return self.frozen(x) + self.lora_b(self.lora_a(self.dropout(x))) * self.scale


def target_names(targets):
    names = set()
    for t in targets:
        if t in ("all-linear", "all_linear"):
            names.update(ALL_LINEAR)
        else:
            names.add(ALIASES.get(t, t))
    unknown = names - set(ALL_LINEAR)
    if unknown:
        raise ValueError(f"unknown LoRA targets {sorted(unknown)}; the model's linear layers are {ALL_LINEAR} (or all-linear)")
    return names


def add_adapters(model, lora, fp8=False):
    """Replaces each targeted linear layer of model by a LoRALinear and
    freezes everything else; with fp8 the blocks' other linear layers
    become FrozenLinear in fp8. Returns the number of adapted layers."""
    names = target_names(lora.targets)
    for p in model.parameters():
        p.requires_grad_(False)
    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if name in names and isinstance(child, nn.Linear):
                setattr(parent, name, LoRALinear(child, lora.rank, lora.alpha, lora.dropout, fp8))
                swapped += 1
            elif fp8 and name in ALL_LINEAR and isinstance(child, nn.Linear):
                setattr(parent, name, FrozenLinear(child, True))
    return swapped


def is_adapter(fqn):
    return ".lora_a." in fqn or ".lora_b." in fqn


def freeze_base(model):
    """Trains the adapters alone. Tensor parallelism's SequenceParallel
    re-creates the norms' weights as trainable parameters, so a model it
    split is frozen again."""
    for fqn, p in model.named_parameters():
        p.requires_grad_(is_adapter(fqn))


@torch.no_grad()
def merge_into_base(model):
    """Adds scale * B A into each adapted weight, in place, on whatever
    sharding the weights have; every rank must call it (it gathers the
    adapters). The adapters stay, so the model must not train on after."""
    from torch.distributed.tensor import DTensor, distribute_tensor
    for module in model.modules():
        if not isinstance(module, LoRALinear):
            continue
        a, b, w = module.lora_a.weight, module.lora_b.weight, module.weight
        a = a.full_tensor() if isinstance(a, DTensor) else a
        b = b.full_tensor() if isinstance(b, DTensor) else b
        delta = (b.float() @ a.float()) * module.scale
        module.w_amax = None
        if isinstance(w, DTensor):
            local = w.to_local()
            local.add_(distribute_tensor(delta, w.device_mesh, w.placements).to_local().to(local.dtype))
        else:
            w.add_(delta.to(w.dtype))
