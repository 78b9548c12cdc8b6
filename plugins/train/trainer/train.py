"""gpuflow's trainer for pretrain and finetune stages, one process per GPU
under torchrun:

  python3 -m torch.distributed.run --standalone --nproc-per-node=N train.py --config config.json

config.json is written by plugins/train (prepare.go: runConfig) and read
as config.py's RunConfig. Progress
goes to stdout as JSON lines (report.py); a SIGTERM makes every rank finish
its step, write a checkpoint and exit.
"""

import argparse
import ctypes
import dataclasses
import inspect
import math
import os
import signal
import sys
import time
import traceback

import torch
import torch.distributed as dist

import ckpt
import config
import fp8
import hf
import lossscale
import model as M
import models
import parallel
import rules
from board import Board
from data import IGNORE, Batches, DataError, InOrder, TokenShards, inputs_and_labels
from lora import add_adapters, freeze_base, is_adapter, merge_into_base
from stepprofile import StepProfiler
from report import Reporter, Throughput, TrainerError, lr_at, warmup_steps_to_skip

MAX_GRAD_NORM = 1.0
BETAS = (0.9, 0.95)
# A model whose fp32 weights fit in this share of one GPU is built whole on
# every rank before it is split, so its initial weights do not depend on the
# layout; a larger one is initialised shard by shard.
WHOLE_INIT_SHARE = 0.25
# Global batches a validation reads when the config does not say.
EVAL_BATCHES = 8


class Trainer:
    def __init__(self, cfg, rep):
        self.cfg, self.rep = cfg, rep
        self.layout = cfg.layout
        self.cpu = cfg.device == "cpu"
        try:
            self.args, self.family = models.model_args(cfg.model)
        except (OSError, ValueError, KeyError, models.UnsupportedModel) as e:
            raise TrainerError("Model folder unusable", f"{cfg.model.hf}: {e}") from e
        # Read now, so that a folder that cannot tell fails before training, not after it.
        self.export_dtype = self._export_dtype() if cfg.export_hf else None
        self.lora = cfg.lora
        self.stop_requested = False
        self._check_rules()

    def _check_rules(self):
        """Refuses what the rule table refuses, as gpuflow's plan does."""
        model = {"tied_embeddings": self.args.tied_embeddings, "activation": self.cfg.model.activation}
        f = rules.facts(dataclasses.asdict(self.layout), model, self.lora, self.cfg.device)
        broken = rules.refusals(f)
        if broken:
            r = broken[0]
            raise TrainerError(f"Trainer rule {r['name']}: {r['summary']}", rules.message(r, f))

    # -- set-up ------------------------------------------------------------

    def run(self):
        self._signals()
        self._init_distributed()
        self.board = Board(self.cfg.tensorboard_dir, self.rank == 0, self.rep)
        try:
            self._load_data()
            self._load_valid()
            self._build()
            start, loss = self._restore()
            if self.tied:
                self.tied.sync_weights()
            self._train(start, loss)
        finally:
            self.board.close()

    def _signals(self):
        signal.signal(signal.SIGTERM, self._on_term)
        try:  # PR_SET_PDEATHSIG: if torchrun dies, stop as if stopped
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGTERM))
        except (OSError, AttributeError):
            pass

    def _on_term(self, signum, frame):
        self.stop_requested = True

    def _init_distributed(self):
        if self.cpu:
            return self._init_cpu()
        if not torch.cuda.is_available():
            raise TrainerError("No GPU", "PyTorch sees no CUDA GPU on this machine; the trainer runs on NVIDIA GPUs only.")
        if not dist.is_nccl_available():
            raise TrainerError("NCCL not available",
                               "This PyTorch has no NCCL backend, so distributed training would fall back to Gloo, which moves "
                               "every GPU tensor through the CPU. Install a CUDA build of PyTorch (it ships NCCL).")
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.device = torch.device("cuda", self.local_rank)
        torch.cuda.set_device(self.device)
        dist.init_process_group("nccl", device_id=self.device)
        if dist.get_backend() != "nccl":
            raise TrainerError("Not running on NCCL", f"The process group came up on {dist.get_backend()}, not NCCL; GPU training on it would crawl.")
        self._ranks()

    def _init_cpu(self):
        """Every rank on this machine's CPU cores over gloo, in fp32: a smoke
        test of a layout without GPUs."""
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.device = torch.device("cpu")
        dist.init_process_group("gloo")
        self._ranks()

    def _ranks(self):
        l = self.layout
        want = l.tp * l.pp * l.dp * l.cp
        if dist.get_world_size() != want:
            raise TrainerError("Wrong number of processes", f"The layout needs {want} processes (tp*pp*dp*cp) and torchrun started {dist.get_world_size()}.")
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.mesh = parallel.build_mesh(l, self.device.type)
        self.tp_rank = self.mesh["tp"].get_local_rank()
        self.dp_rank = self.mesh["dp"].get_local_rank()
        self.pp_rank = self.mesh["pp"].get_local_rank()
        self.accum = l.global_batch // (l.micro_batch * l.dp)
        torch.manual_seed(self.cfg.seed)

    def _load_data(self):
        try:
            shards = TokenShards(self.cfg.data, self.args.seq_len, self.cfg.masks)
            self.batches = Batches(shards, self.layout.global_batch, self.cfg.seed)
        except DataError as e:
            raise TrainerError("Training data unreadable", str(e)) from e
        self.rep.log(f"{self.batches.shards.samples} samples of {self.args.seq_len + 1} tokens in {len(self.cfg.data)} shards; "
                     f"{self.cfg.steps} steps read {self.batches.epochs(self.cfg.steps):.2f} epochs")

    def _load_valid(self):
        """The validation set, when the config names one: the first
        eval_batches global batches of valid_data in file order."""
        self.valid = None
        if not self.cfg.valid_data:
            return
        try:
            shards = TokenShards(self.cfg.valid_data, self.args.seq_len)
        except DataError as e:
            raise TrainerError("Validation data unreadable", str(e)) from e
        self.valid = InOrder(shards, self.layout.global_batch, self.cfg.eval_batches or EVAL_BATCHES)
        every = self.cfg.eval_every or 0
        self.rep.log(f"validation on {self.valid.batches} batches of {self.layout.global_batch} of its {shards.samples} samples, "
                     + (f"every {every} steps and at the end" if every else "at the end"))

    def _make_model(self, args):
        m = M.Transformer(args)
        in_fp8 = self.layout.precision == "fp8"
        if in_fp8 and not fp8.supported(self.device):
            raise TrainerError("fp8 not supported here", "fp8 training needs a GPU of compute capability 8.9 or later (Ada, Hopper, Blackwell); use precision = \"bf16\".")
        if self.lora:
            # The frozen base's products in fp8, the adapters in bf16 (lora.py).
            add_adapters(m, self.lora, fp8=in_fp8)
        elif in_fp8:
            fp8.convert(m)
        return m

    def _build(self):
        l, cfg = self.layout, self.cfg
        parts, self.stages = parallel.build_parts(self.args, l, self.pp_rank, self._make_model)
        self.alone = alone = parallel.one_gpu(l, self.cpu)
        whole_bytes = cfg.params * 4
        whole = self.cpu or alone or whole_bytes <= WHOLE_INIT_SHARE * torch.cuda.get_device_properties(self.device).total_memory
        low = parallel.compute_dtype(l.precision, self.cpu)
        for _, part in parts:
            if whole:
                part.to_empty(device=self.device)
                M.init_full(part, cfg.seed, self.device)
            if l.tp > 1:
                parallel.apply_tp(part, self.mesh["tp"], l.sequence_parallel)
                if self.lora:
                    freeze_base(part)
            parallel.set_recompute(part, l.recompute)
            runs = parallel.compute_copy(part, low) if alone else part
            if cfg.compile:
                parallel.compile_blocks(runs)
            if not alone:
                parallel.apply_fsdp(part, *parallel.data_parallel(self.mesh, l), compute_dtype=low)
            if not whole:
                part.to_empty(device=self.device)
                self._init_sharded(part)
        self.stage_ids = [s for s, _ in parts]
        self.parts = [p for _, p in parts]
        self.has_first = 0 in self.stage_ids
        self.has_last = self.stages - 1 in self.stage_ids
        self.loss_fn = parallel.cross_entropy
        self.summed_loss_fn = parallel.summed_cross_entropy
        # CPU ranks under TP take the loss on DTensor shards, inside
        # PyTorch's loss parallelism (parallel.loss_context).
        self.dtensor_loss = l.tp > 1 and self.cpu
        if self.dtensor_loss:
            self.loss_fn = parallel.vocab_parallel_loss(self.mesh["tp"])
            self.summed_loss_fn = parallel.vocab_parallel_loss(self.mesh["tp"], "sum")
        elif not self.cpu:
            # Imported here: xent's kernels need Triton, which PyTorch's
            # CPU builds lack, and CPU ranks run without them.
            import xent
            if l.tp > 1:
                # The logits' shards read once each, in bf16, where loss
                # parallelism makes fp32 copies of them.
                self.loss_fn = xent.vocab_parallel(self.mesh["tp"], self.args.vocab)
                self.summed_loss_fn = xent.vocab_parallel(self.mesh["tp"], self.args.vocab, "sum")
            else:
                # Reads the logits once in the forward, where the compiled
                # F.cross_entropy takes the time of two passes.
                self.loss_fn = xent.cross_entropy
                self.summed_loss_fn = xent.summed_cross_entropy
        elif cfg.compile:
            # Eagerly, should the compiler fail (compile_blocks).
            torch._dynamo.config.suppress_errors = True
            self.loss_fn = torch.compile(parallel.cross_entropy)
            self.summed_loss_fn = torch.compile(parallel.summed_cross_entropy)
        self.optimizers = [self._optimizer(p) for p in self.parts]
        self.tied = None
        if self.args.tied_embeddings and l.pp > 1:
            self.tied = parallel.TiedStages(self.mesh, self.parts, self.stage_ids, self.stages)
        # fp16's narrow range needs the loss scaled (lossscale.py); on CPU
        # ranks, which compute in fp32, the same path runs unneeded, so
        # that a layout's scaling is checked there against one process.
        self.scaler = lossscale.LossScaler(self.device) if l.precision == "fp16" else None
        self.loss_scale = 1.0
        if l.pp > 1:
            from torch.distributed.pipelining import PipelineStage
            group = self.mesh["pp"].get_group()
            stages = [PipelineStage(p, s, self.stages, self.device, group=group) for s, p in parts]
            self.masked = parallel.MaskedPipelineLoss(self.summed_loss_fn, self.accum) if cfg.masks else None
            loss_fn = self.loss_fn if self.masked is None else self.masked
            if self.scaler:
                loss_fn = self.scaler.scaled_loss_fn(loss_fn)
            self.schedule, self.loss_scale = parallel.pipeline_schedule(stages, self.accum, loss_fn)
        trained = sum(p.numel() for part in self.parts for p in part.parameters() if p.requires_grad)
        self.rep.log(f"model: {cfg.params / 1e6:.1f}M parameters ({trained / 1e6:.2f}M trained on this rank's chunks); "
                     f"layout tp={l.tp} pp={l.pp} dp={l.dp} vp={l.vp}, {self.accum} micro-batches of {l.micro_batch} per step; "
                     f"recompute {l.recompute}, {l.precision}, compile {cfg.compile}, "
                     f"{'whole' if whole else 'sharded'} initialisation, {parallel.dtype_name(low)} "
                     f"{'compute copy on one GPU' if alone else 'compute under FSDP2'}{', dynamic loss scaling' if self.scaler else ''}")

    def _init_sharded(self, part):
        with torch.no_grad():
            for fqn, p in part.named_parameters():
                M.init_value(fqn, p, self.args.layers, None)
        part.init_buffers(self.device)

    def _optimizer(self, part):
        decay, flat = [], []
        for p in part.parameters():
            if p.requires_grad:
                (decay if p.ndim >= 2 else flat).append(p)
        groups = [g for g in ({"params": decay, "weight_decay": self.cfg.weight_decay},
                              {"params": flat, "weight_decay": 0.0}) if g["params"]]
        if not groups:
            raise TrainerError("Nothing to train", "No parameter of this rank's model chunk is trainable; check the LoRA targets.")
        if self.alone:
            # AdamW that writes the compute copy's weights as it steps
            # (adamw.py): one pass over them where fused AdamW and the
            # next forward's copy take two.
            import adamw
            return adamw.CopyWritingAdamW(groups, part.compute_copies, lr=self.cfg.lr, betas=BETAS, eps=1e-8)
        return torch.optim.AdamW(groups, lr=self.cfg.lr, betas=BETAS, eps=1e-8, fused=not self.cpu)

    def _restore(self):
        """Loads the base model (finetune) and the checkpoint to resume from;
        returns the step to start at and the loss the checkpoint recorded."""
        cfg = self.cfg
        keep = is_adapter if self.lora else (lambda k: True)
        if cfg.base:
            self._load_base(cfg.base, cfg.base_format)
        if not cfg.resume_from:
            return 0, None
        marker = ckpt.load(cfg.resume_from, self.parts, self.optimizers, keep=keep)
        self.rep.log(f"resumed from {cfg.resume_from} at step {marker['step']}")
        if self.scaler and marker.get("loss_scale"):
            self.scaler.load_state_dict(marker["loss_scale"])
            self.rep.log(f"loss scale {self.scaler.state_dict()['scale']:g} from the checkpoint")
        return int(marker["step"]), marker.get("loss")

    def _load_base(self, path, fmt):
        """The weights to start from: a Hugging Face folder, read shard by
        shard, or a gpuflow checkpoint."""
        keep = lambda k: not is_adapter(k)
        try:
            if fmt == "hf":
                line, _ = hf.load_report(path, self.parts, self.family.to_hf, keep, self.device)
                self.rep.log(line)
            else:
                ckpt.load_weights(path, self.parts, keep=keep)
        except (hf.FolderError, KeyError) as e:
            raise TrainerError("Base model does not fit the model", f"{path}: {e}") from e
        except Exception as e:
            raise TrainerError("Base model does not fit the model", f"{path}: {type(e).__name__}: {e}") from e
        self.rep.log(f"base weights from {path}")

    # -- training ----------------------------------------------------------

    def _train(self, start, loss):
        cfg, l, a = self.cfg, self.layout, self.args
        steps = cfg.steps
        tokens_per_step = l.global_batch * a.seq_len
        thr = Throughput(warmup_steps_to_skip(steps - start), tokens_per_step, cfg.flops_per_token, cfg.peak_flops, self.world)
        every = cfg.checkpoint_every
        eval_every = cfg.eval_every
        last = cfg.resume_from
        if not self.cpu:
            torch.cuda.reset_peak_memory_stats(self.device)
        prof = StepProfiler(steps, self.rank, self.device)
        for s in range(start, steps):
            prof.before(s)
            t0 = time.perf_counter()
            lr = lr_at(s, cfg)
            for o in self.optimizers:
                for g in o.param_groups:
                    g["lr"] = lr
            torch.manual_seed(M.param_seed(cfg.seed, f"step{s}"))  # dropout masks independent of resumes
            local = self._step(self._batch(s))
            self._optimizer_step(self._clip())
            loss, stop = self._reduce(local)
            dt = time.perf_counter() - t0
            prof.after(s)
            thr.add(dt)
            k = s + 1
            scaling, skipped = self._scale_figures(k)
            if not math.isfinite(loss) and not skipped:
                raise TrainerError("Loss is not finite", f"At step {k} the loss became {loss}. Lower lr, raise warmup_steps, or check the data.")
            figures = {"loss": loss, "lr": lr, "tokens_per_s": tokens_per_step / dt, "mfu": thr.mfu(tokens_per_step / dt),
                       "memory_bytes": self._allocated(), **scaling}
            self.rep.emit("step", step=k, steps=steps, step_time_s=dt, **figures)
            self.board.scalars(k, {"train/" + name: v for name, v in figures.items()})
            if stop:
                path = self._save(k, loss) if cfg.checkpoint else ""
                self.rep.emit("stopped", step=k, path=path)
                return
            if every and k % every == 0 and k < steps and cfg.checkpoint:
                last = self._save(k, loss)
            if self.valid and eval_every and k % eval_every == 0 and k < steps:
                self._validate(k)
        memory = self._memory()
        validated = self._validate(steps) if self.valid else None
        if cfg.checkpoint and start < steps:
            last = self._save(steps, loss)
        result = {"checkpoint": last, "final_loss": loss, "tokens_per_s": thr.tokens_per_s(), "mfu": thr.mfu(),
                  "peak_memory_bytes": max(m[0] for m in memory), "peak_memory_bytes_per_rank": [m[0] for m in memory],
                  "peak_allocated_bytes": max(m[1] for m in memory), "steps": steps, "tokens": steps * tokens_per_step,
                  "resumed_from_step": start, "adapters": "", "merged": ""}
        if validated:
            result["valid_loss"], result["valid_perplexity"] = validated
        if self.scaler:
            result["loss_scale"], result["skipped_steps"] = self.scaler.state_dict()["scale"], self.scaler.skipped_steps
        if self.lora:
            # Gathered once, for whichever of the two files is written.
            adapters = hf.adapters_at_rank0(self.parts, self._is_writer()) if last or cfg.export_peft else None
            result["adapters"] = self._export_adapters(last, adapters)
            if cfg.export_peft:
                hf.export_adapters(cfg.export_peft, adapters, self.family.peft_tensors)
            if cfg.merge:
                result["merged"] = self._merge(steps, loss)
        if cfg.export_hf:
            hf.export_model(cfg.export_hf, self.parts, self.family.to_hf, lambda k: not is_adapter(k), self.export_dtype,
                            self._is_writer(), self.pp_rank)
        self.rep.emit("result", result=result)

    def _is_writer(self):
        """One rank of each pipeline stage writes that stage's exported tensors."""
        return self.tp_rank == 0 and self.dp_rank == 0

    def _export_dtype(self):
        """The exported weights' storage type: the source folder's (as its
        config.json names it, else as its tensors are stored); bf16 for a
        model from a preset."""
        m = self.cfg.model
        if not m.hf:
            return "bfloat16"
        types = ", ".join(hf.DTYPES)
        try:
            c = models.read_config(m.hf)
            dtype = c.get("dtype") or c.get("torch_dtype") or hf.stored_dtype(m.hf)
        except (OSError, ValueError, KeyError, hf.FolderError) as e:
            raise TrainerError("Export type unknown", f"{m.hf} does not tell the type to export its weights in (export_hf): "
                               f"{type(e).__name__}: {e}. Name one ({types}) as dtype in its config.json.") from e
        if dtype not in hf.DTYPES:
            raise TrainerError("Export type unknown", f"{m.hf} stores its weights as {dtype}; an export (export_hf) writes "
                               f"{types}. Name one of them as dtype in its config.json.")
        return dtype

    def _batch(self, step):
        batch = self._checked(self.batches.local(step, self.dp_rank, self.layout.dp))
        inputs, labels = inputs_and_labels(batch, self.batches.local_mask(step, self.dp_rank, self.layout.dp))
        return inputs.to(self.device, non_blocking=True), labels.to(self.device, non_blocking=True)

    def _checked(self, batch):
        """The batch, once its tokens fit the vocabulary."""
        top = int(batch.max())
        if top >= self.args.vocab:
            raise TrainerError("Token beyond the vocabulary", f"The data holds token id {top}, but the model's vocab is {self.args.vocab}. "
                               "Raise vocab in the model block to cover the tokenizer.")
        return batch

    def _step(self, batch):
        """Forward and backward of one optimizer step; returns this rank's
        mean loss (zero where this rank computes none)."""
        with parallel.loss_context(self.dtensor_loss):
            loss = self._forward_backward(batch)
        if self.tied:
            self.tied.sync_grads()
        return loss

    def _forward_backward(self, batch):
        inputs, labels = batch
        if self.layout.pp > 1:
            if self.masked is not None:
                self.masked.scale = self._trained_scale(labels)
            losses = []
            args = (inputs,) if self.has_first else ()
            kwargs = {"target": labels, "losses": losses} if self.has_last else {}
            if "return_outputs" in inspect.signature(self.schedule.step).parameters:
                kwargs["return_outputs"] = False  # the logits of every micro-batch are not needed
            self.schedule.step(*args, **kwargs)
            if self.has_last:
                loss = torch.stack([x.detach().float() for x in losses]).mean() * self.loss_scale
                return loss / self.scaler.scale if self.scaler else loss
            return torch.zeros((), device=self.device)
        total = torch.zeros((), device=self.device)
        micro = self.layout.micro_batch
        scale = self._trained_scale(labels) if self.cfg.masks else None
        for m in range(self.accum):
            rows = slice(m * micro, (m + 1) * micro)
            if scale is None:
                loss = self.loss_fn(self.parts[0](inputs[rows]), labels[rows]) / self.accum
            else:
                loss = self.summed_loss_fn(self.parts[0](inputs[rows]), labels[rows]) * scale
            (self.scaler.scaled(loss) if self.scaler else loss).backward()
            total += loss.detach().float()
        return total

    def _trained_scale(self, labels):
        """What a rank's summed masked loss is multiplied by for the step's
        loss to be the mean over the global batch's trained tokens: dp / T,
        as data parallelism averages the replicas' gradients. T counts each
        replica once (its tp and pp ranks read the same samples); a batch
        with none trained has a zero loss."""
        count = (labels != IGNORE).sum().float()
        dist.all_reduce(count)
        trained = count / (self.world // self.layout.dp)
        return self.layout.dp / trained.clamp(min=1)

    def _clip(self):
        """Clips the global gradient norm: per-mesh norms (FSDP and TP put
        parameters on different meshes), then summed over pipeline stages.
        Under fp16 the gradients carry the loss scale: the norm is taken
        without it, the clipping multiply divides it out, and the flag
        returned (None without loss scaling) says whether any rank's
        gradients overflowed."""
        from torch.distributed.tensor import DTensor
        groups = {}
        for part in self.parts:
            for p in part.parameters():
                if p.grad is not None and not (self.tied and self.tied.is_copy(p)):
                    key = p.grad.device_mesh if isinstance(p.grad, DTensor) else None
                    groups.setdefault(key, []).append(p.grad)
        sq = torch.zeros((), device=self.device)
        for grads in groups.values():
            n = torch.nn.utils.get_total_norm(grads, 2.0, False, True)
            if isinstance(n, DTensor):
                n = n.full_tensor()
            sq = sq + n.float() ** 2
        if self.layout.pp > 1:
            dist.all_reduce(sq, group=self.mesh["pp"].get_group())
        found = None
        if self.scaler:
            sq, found = self.scaler.unscale(sq)
        coef = (MAX_GRAD_NORM / (sq.sqrt() + 1e-6)).clamp(max=1.0)
        if self.scaler:
            coef = coef / self.scaler.scale
        if self.alone:
            # The one-GPU AdamW (adamw.py) divides each gradient by
            # grad_scale as it reads it and skips the step where found_inf
            # is set (torch.amp.GradScaler's way in to fused AdamW), which
            # saves a pass that reads and writes every gradient to scale it.
            for o in self.optimizers:
                o.grad_scale = coef.reciprocal()
                if found is not None:
                    o.found_inf = found
            return found
        for grads in groups.values():
            torch._foreach_mul_(grads, coef)
        if self.tied and self.tied.copy and self.tied.weight.grad is not None:
            torch._foreach_mul_([self.tied.weight.grad], coef)
        return found

    def _optimizer_step(self, found):
        """Steps every optimizer, unless the gradients overflowed (found,
        from _clip): on one GPU AdamW (adamw.py) skips by itself, elsewhere
        every rank reads the flag, the same on all of them. Then the loss
        scale follows."""
        if found is None or self.alone or not found.item():
            for o in self.optimizers:
                o.step()
        for o in self.optimizers:
            o.zero_grad(set_to_none=True)
        if found is not None:
            self.scaler.update(found)

    def _scale_figures(self, step):
        """The step's loss scale and the steps skipped so far (none
        without loss scaling), and whether this step was skipped."""
        if not self.scaler:
            return {}, False
        used, skipped = self.scaler.settle()
        if skipped and self.scaler.exhausted():
            raise TrainerError("fp16 gradients overflow at every loss scale",
                               f"At step {step} the gradients overflowed again and the loss scale fell below "
                               f"{lossscale.MIN_SCALE:g} after {self.scaler.skipped_steps} skipped steps: they exceed fp16's range "
                               "even unscaled. Use precision = \"bf16\", or lower lr.")
        return {"loss_scale": used, "skipped_steps": self.scaler.skipped_steps}, skipped

    def _reduce(self, local):
        """The step's loss on every rank (each data-parallel replica's last
        stage counted once) and whether any rank was asked to stop."""
        mine = local if (self.has_last and self.tp_rank == 0) else torch.zeros((), device=self.device)
        vec = torch.stack([mine.float().reshape(()), torch.tensor(float(self.stop_requested), device=self.device)])
        dist.all_reduce(vec)
        loss, stop = vec.tolist()
        return loss / self.layout.dp, stop > 0

    # -- validation ----------------------------------------------------------

    def _validate(self, step):
        """The mean loss over the validation batches, forward only and in
        eval mode (no dropout); reported and returned with its perplexity."""
        for part in self.parts:
            part.eval()
        total = 0.0
        with torch.no_grad(), parallel.loss_context(self.dtensor_loss):
            for b in range(self.valid.batches):
                batch = self._checked(self.valid.local(b, self.dp_rank, self.layout.dp))
                total += self._replica_mean(self._eval_loss(batch.to(self.device, non_blocking=True)))
        for part in self.parts:
            part.train()
        loss = total / self.valid.batches
        perplexity = math.exp(min(loss, 700.0))
        self.rep.emit("valid", step=step, steps=self.cfg.steps, valid_loss=loss, valid_perplexity=perplexity)
        self.board.scalars(step, {"valid/loss": loss, "valid/perplexity": perplexity})
        return loss, perplexity

    def _eval_loss(self, batch):
        """This rank's mean loss over the batch's micro-batches; zero where
        this rank holds no last pipeline stage."""
        inputs, labels = batch[:, :-1].contiguous(), batch[:, 1:].contiguous()
        micro = self.layout.micro_batch
        total = torch.zeros((), device=self.device)
        for m in range(self.accum):
            rows = slice(m * micro, (m + 1) * micro)
            logits = self._pipeline_forward(inputs[rows]) if self.layout.pp > 1 else self.parts[0](inputs[rows])
            if logits is not None:
                total += self.loss_fn(logits, labels[rows]).float()  # as in training: the same loss function
        return total / self.accum

    def _pipeline_forward(self, tokens):
        """One micro-batch through every model chunk in order, forward only:
        each rank runs the chunks it holds and passes the activations on to
        the rank of the next chunk. The rank of the last chunk returns the
        logits, the others None."""
        pp, group = self.layout.pp, self.mesh["pp"].get_group()
        h, logits = tokens, None
        for s in range(self.stages):
            if s % pp != self.pp_rank:
                continue
            if s > 0:
                h = self._recv_activation(dist.get_global_rank(group, (s - 1) % pp), group)
            out = self.parts[self.stage_ids.index(s)](h)
            if s == self.stages - 1:
                logits = out
            else:
                self._send_activation(out, dist.get_global_rank(group, (s + 1) % pp), group)
        return logits

    def _send_activation(self, out, dst, group):
        """Sends the shape, then the activations in fp32 (the next chunk
        casts them back to its compute precision)."""
        out = out.detach().float().contiguous()
        dist.send(torch.tensor(out.shape, dtype=torch.int64, device=self.device), dst, group=group)
        dist.send(out, dst, group=group)

    def _recv_activation(self, src, group):
        shape = torch.empty(3, dtype=torch.int64, device=self.device)
        dist.recv(shape, src, group=group)
        h = torch.empty(shape.tolist(), dtype=torch.float32, device=self.device)
        dist.recv(h, src, group=group)
        return h

    def _replica_mean(self, local):
        """A loss every rank computed part of, on every rank: each
        data-parallel replica's last stage counted once, averaged over the
        replicas."""
        mine = local if (self.has_last and self.tp_rank == 0) else torch.zeros((), device=self.device)
        total = mine.float().reshape(()).clone()
        dist.all_reduce(total)
        return total.item() / self.layout.dp

    def _allocated(self):
        return 0 if self.cpu else torch.cuda.max_memory_allocated(self.device)

    def _memory(self):
        """(peak bytes, peak allocated) per rank: PyTorch's peak reserved plus
        what the process holds outside PyTorch (CUDA context, NCCL); on CPU
        ranks, the process's peak resident memory for both."""
        if self.cpu:
            import resource
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            mine = torch.tensor([peak, peak], dtype=torch.int64)
            every = [torch.zeros_like(mine) for _ in range(self.world)]
            dist.all_gather(every, mine)
            return [t.tolist() for t in every]
        free, total = torch.cuda.mem_get_info(self.device)
        outside = max(0, (total - free) - torch.cuda.memory_reserved(self.device))
        mine = torch.tensor([torch.cuda.max_memory_reserved(self.device) + outside, torch.cuda.max_memory_allocated(self.device)],
                            device=self.device, dtype=torch.int64)
        every = [torch.zeros_like(mine) for _ in range(self.world)]
        dist.all_gather(every, mine)
        return [t.tolist() for t in every]

    # -- outputs -----------------------------------------------------------

    def _save(self, step, loss):
        path = ckpt.step_dir(self.cfg.checkpoint_dir, step)
        keep = is_adapter if self.lora else (lambda k: True)
        marker = {"step": step, "steps": self.cfg.steps, "loss": loss, "stage": self.cfg.stage,
                  "tokens": step * self.layout.global_batch * self.args.seq_len}
        if self.scaler:
            marker["loss_scale"] = self.scaler.state_dict()
        ckpt.save(path, self.parts, self.optimizers, marker, keep=keep)
        ckpt.prune(self.cfg.checkpoint_dir, self.cfg.keep_checkpoints, protect={path})
        self.rep.emit("checkpoint", step=step, path=path)
        return path

    def _export_adapters(self, checkpoint, adapters):
        """The adapters (hf.adapters_at_rank0's) as one safetensors file in
        bf16 beside the last checkpoint, written whole by rank 0 before it
        takes its name (collective)."""
        if not checkpoint:
            return checkpoint
        from safetensors.torch import save_file
        path = os.path.join(checkpoint, "adapters.safetensors")
        if self.rank == 0:
            tensors = {fqn: t.to(torch.bfloat16).contiguous() for fqn, t in adapters.items()}
            meta = {"rank": str(self.lora.rank), "alpha": str(self.lora.alpha), "targets": ",".join(self.lora.targets)}
            save_file(tensors, path + ".partial", metadata=meta)
            os.replace(path + ".partial", path)
        dist.barrier()
        return path

    def _merge(self, step, loss):
        for part in self.parts:
            merge_into_base(part)
        path = os.path.join(self.cfg.checkpoint_dir, "merged")
        marker = {"step": step, "steps": self.cfg.steps, "loss": loss, "stage": self.cfg.stage, "merged": True}
        ckpt.save(path, self.parts, self.optimizers, marker, keep=lambda k: not is_adapter(k), with_optim=False)
        self.rep.log(f"merged weights: {path}")
        return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    path = ap.parse_args().config
    rep = Reporter(int(os.environ.get("RANK", "0")) == 0)
    code = 0
    try:
        Trainer(config.load(path), rep).run()
    except config.ConfigError as e:
        rep.emit("error", summary="Trainer config unreadable", detail=f"{e}.")
        code = 1
    except TrainerError as e:
        rep.emit("error", summary=e.summary, detail=e.detail)
        code = 1
    except Exception as e:  # anything else: the traceback goes to stderr, the gist to gpuflow
        traceback.print_exc()
        rep.emit("error", summary="Training failed", detail=f"{type(e).__name__}: {e}")
        code = 1
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    sys.exit(code)


if __name__ == "__main__":
    main()
