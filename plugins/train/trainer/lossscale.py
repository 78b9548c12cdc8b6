"""Dynamic loss scaling for fp16 training, as torch.amp.GradScaler does it:
the loss is multiplied by a scale before the backward, so that small
gradients stay above fp16's smallest values; a step whose gradients hold
an inf or a NaN anywhere is skipped and the scale halved; after
GROWTH_INTERVAL clean steps in a row the scale doubles. The defaults,
the update kernel (torch._amp_update_scale_) and the state_dict keys are
GradScaler's, and AdamW takes the scale and the overflow flag as
GradScaler hands them to fused AdamW (grad_scale, found_inf).

GradScaler itself (and FSDP's ShardedGradScaler) does not fit the
trainer's step in three ways, so the trainer keeps the scale here:
its unscale_ reads and writes every gradient once more, where the
trainer folds 1/scale into the clipping multiply it makes anyway (or
into AdamW's grad_scale on one GPU, adamw.py); it looks for infs per
optimizer, and a pipeline rank holds one optimizer per model chunk, so
chunks could step apart; and only ShardedGradScaler agrees over ranks,
per optimizer again. Here the overflow test is the global gradient norm
the clipping computes (an inf or NaN anywhere makes it non-finite),
all-reduced over every rank, so all ranks and chunks skip together.
"""

import torch
import torch.distributed as dist

# torch.amp.GradScaler's defaults.
INIT_SCALE = 2.0**16
GROWTH_FACTOR = 2.0
BACKOFF_FACTOR = 0.5
GROWTH_INTERVAL = 2000
# Below this the gradients overflow fp16 even unscaled, and skipping
# more steps will not help (Megatron-LM's minimum loss scale).
MIN_SCALE = 1.0


class LossScaler:
    """The loss scale and its growth counter, as tensors on the device so
    that nothing waits for the host until the step's figures are read."""

    def __init__(self, device, init_scale=INIT_SCALE, growth_interval=GROWTH_INTERVAL):
        self.scale = torch.full((), init_scale, dtype=torch.float32, device=device)
        self.growth_tracker = torch.zeros((), dtype=torch.int32, device=device)
        self.growth_interval = growth_interval
        self.skipped_steps = 0
        self._step = None

    def scaled(self, loss):
        """What the backward starts from."""
        return loss * self.scale

    def scaled_loss_fn(self, loss_fn):
        """loss_fn, its result scaled: what a pipeline schedule backpropagates."""
        def scaled(*args):
            return self.scaled(loss_fn(*args))
        return scaled

    def unscale(self, sq_norm):
        """The squared gradient norm without the scale, and 1.0 where any
        rank's gradients hold an inf or a NaN (else 0.0): one decision for
        every rank."""
        found = (~torch.isfinite(sq_norm)).float()
        if dist.is_initialized():
            dist.all_reduce(found, op=dist.ReduceOp.MAX)
        return sq_norm / self.scale / self.scale, found

    def update(self, found):
        """After the step: backs off on an overflow, grows after
        growth_interval clean steps. Keeps the scale the step used for
        settle()."""
        self._step = torch.stack([self.scale.clone(), found])
        torch._amp_update_scale_(self.scale, self.growth_tracker, found, GROWTH_FACTOR, BACKOFF_FACTOR, self.growth_interval)

    def settle(self):
        """The scale the last step used and whether it was skipped, read on
        the host (once the step's loss is read anyway); counts the skip."""
        used, found = self._step.tolist()
        skipped = found > 0
        self.skipped_steps += int(skipped)
        return used, skipped

    def exhausted(self):
        """Whether the scale fell below MIN_SCALE."""
        return float(self.scale) < MIN_SCALE

    def state_dict(self):
        """GradScaler's keys, and the steps skipped so far."""
        return {"scale": float(self.scale), "growth_factor": GROWTH_FACTOR, "backoff_factor": BACKOFF_FACTOR,
                "growth_interval": self.growth_interval, "_growth_tracker": int(self.growth_tracker),
                "skipped_steps": self.skipped_steps}

    def load_state_dict(self, state):
        self.scale.fill_(state["scale"])
        self.growth_tracker.fill_(state["_growth_tracker"])
        self.growth_interval = int(state["growth_interval"])
        self.skipped_steps = int(state.get("skipped_steps", 0))
