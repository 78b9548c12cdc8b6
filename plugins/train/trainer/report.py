"""The trainer's side of its protocol with gpuflow: one JSON object per line
on stdout, from rank 0 only, each with an "event":

  step        step, steps, loss, lr, tokens_per_s, mfu, memory_bytes, step_time_s
  valid       step, steps, valid_loss, valid_perplexity   (a validation after step)
  log         level, message
  checkpoint  step, path
  error       summary, detail   (a problem the user can act on)
  stopped     step, path        (ended early on SIGTERM, after a checkpoint)
  result      result: {final_loss, tokens_per_s, mfu, peak_memory_bytes, ..., valid_loss, valid_perplexity}

plugins/train/events.go reads them. Anything else on stdout is a log line.
"""

import json
import math
import sys


class TrainerError(Exception):
    """A problem the user can fix; its summary and detail become a diagnostic."""

    def __init__(self, summary, detail):
        super().__init__(f"{summary}: {detail}")
        self.summary, self.detail = summary, detail


def _finite(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


class Reporter:
    def __init__(self, enabled, out=None):
        self.enabled = enabled
        self.out = out or sys.stdout

    def emit(self, event, **fields):
        if not self.enabled:
            return
        self.out.write(json.dumps(_finite({"event": event, **fields})) + "\n")
        self.out.flush()

    def log(self, message, level="info"):
        self.emit("log", level=level, message=message)


class Throughput:
    """Tokens per second over the steps after the first `skip` (compilation
    and allocator warm-up), and the MFU that goes with it."""

    def __init__(self, skip, tokens_per_step, flops_per_token, peak_flops, gpus):
        self.skip, self.tokens_per_step = skip, tokens_per_step
        self.flops_per_token, self.peak_flops, self.gpus = flops_per_token, peak_flops, gpus
        self.seen, self.tokens, self.seconds = 0, 0, 0.0
        self.all_tokens, self.all_seconds = 0, 0.0

    def add(self, seconds):
        self.seen += 1
        self.all_tokens += self.tokens_per_step
        self.all_seconds += seconds
        if self.seen > self.skip:
            self.tokens += self.tokens_per_step
            self.seconds += seconds

    def tokens_per_s(self):
        if self.seconds > 0:
            return self.tokens / self.seconds
        return self.all_tokens / self.all_seconds if self.all_seconds > 0 else 0.0

    def mfu(self, tokens_per_s=None):
        tps = self.tokens_per_s() if tokens_per_s is None else tokens_per_s
        if self.peak_flops <= 0:
            return 0.0
        return tps * self.flops_per_token / (self.peak_flops * self.gpus)


def warmup_steps_to_skip(steps):
    """Steps left out of the throughput: 10% of the run, 3 to 20."""
    return min(max(3, steps // 10), 20)


def lr_at(step, cfg):
    """The learning rate of 0-based step `step`: linear warm-up, then the
    schedule down to min_lr at the last step."""
    lr, min_lr, warmup, total = cfg.lr, cfg.min_lr, cfg.warmup_steps, cfg.steps
    if warmup > 0 and step < warmup:
        return lr * (step + 1) / warmup
    if cfg.schedule == "constant":
        return lr
    progress = min(max((step - warmup) / max(1, total - warmup - 1), 0.0), 1.0)
    if cfg.schedule == "linear":
        return lr - (lr - min_lr) * progress
    return min_lr + 0.5 * (lr - min_lr) * (1 + math.cos(math.pi * progress))
