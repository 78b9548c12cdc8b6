"""Hugging Face folders in and out.

Loading is sharded: every rank opens the safetensors files and reads, with
safe_open(...).get_slice, only the rows and columns of each tensor that its
own shard of the parameter holds (whatever FSDP and tensor parallelism made
of it), so no rank ever holds a whole model it could not hold alone. A
parameter that is a block of a fused tensor, or stored transposed (GPT-2's
c_attn and Conv1D layers: a family's to_hf gives a models.slot.Slot), is
read as its slice of that tensor and written back into it.

Exporting gathers each parameter whole, one at a time, on the first data-
and tensor-parallel rank of each pipeline stage, which writes its stage's
tensors under transformers' names into FOLDER.partial in files of at most
SHARD_BYTES, with a manifest. gpuflow (plugins/train/export.go) then names
the files as transformers does, writes the index, config.json, the
generation config and tokenizer files, and renames the folder into place.
"""

import json
import os
import shutil
import time

import torch
import torch.distributed as dist

from models.slot import hf_box, hf_shape, slot

PARTIAL = ".partial"
MANIFEST = "gpuflow-export.json"
SHARD_BYTES = 5 * 2**30
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
# safetensors' header names for the storage types gpuflow reads (the plan
# refuses a folder of any other).
STORED = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}


class FolderError(Exception):
    pass


def weight_map(folder):
    """Tensor name -> safetensors file, from the index or the one file."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            wm = json.load(f)["weight_map"]
        for name in set(wm.values()):
            if not os.path.exists(os.path.join(folder, name)):
                raise FolderError(f"model.safetensors.index.json names {name}, which is not in {folder}")
        return wm
    single = os.path.join(folder, "model.safetensors")
    if not os.path.exists(single):
        raise FolderError(f"{folder} has neither model.safetensors nor model.safetensors.index.json")
    from safetensors import safe_open
    with safe_open(single, framework="pt") as f:
        return {k: "model.safetensors" for k in f.keys()}


def stored_dtype(folder):
    """The storage type of the folder's tensors, from the safetensors header
    of the first by name: what an export keeps when config.json names no
    type, as public GPT-2's does not."""
    from safetensors import safe_open
    name, file = min(weight_map(folder).items())
    with safe_open(os.path.join(folder, file), framework="pt") as f:
        return STORED[f.get_slice(name).get_dtype()]


def local_box(p):
    """The global offsets and sizes of this rank's shard of parameter p."""
    from torch.distributed.tensor import DTensor
    if not isinstance(p, DTensor):
        return tuple(0 for _ in p.shape), tuple(p.shape)
    from torch.distributed.tensor._utils import compute_local_shape_and_global_offset
    shape, offset = compute_local_shape_and_global_offset(p.shape, p.device_mesh, p.placements)
    return tuple(offset), tuple(shape)


@torch.no_grad()
def load(folder, parts, to_hf, keep):
    """Copies each kept parameter's own shard from the folder's safetensors
    files; returns (bytes read, bytes in the files this model needs)."""
    from safetensors import safe_open
    from torch.distributed.tensor import DTensor
    wm = weight_map(folder)
    handles, read, total = {}, 0, 0
    for part in parts:
        for fqn, p in part.named_parameters():
            if not keep(fqn):
                continue
            s = slot(to_hf(fqn))
            key = _stored_key(s.key, wm)
            if key is None:
                raise FolderError(f"no safetensors file in {folder} holds {s.key}, which parameter {fqn} needs")
            if wm[key] not in handles:
                handles[wm[key]] = safe_open(os.path.join(folder, wm[key]), framework="pt", device="cpu")
            sl = handles[wm[key]].get_slice(key)
            want = hf_shape(s, tuple(p.shape))
            if tuple(sl.get_shape()) != want:
                raise FolderError(f"{key} in {wm[key]} has shape {list(sl.get_shape())}, but the model's {fqn} needs {list(want)}")
            offset, shape = local_box(p)
            t = sl[hf_box(s, tuple(p.shape), offset, shape)]
            (p.to_local() if isinstance(p, DTensor) else p).copy_(t.t() if s.transposed else t)
            read += t.numel() * t.element_size()
            total += _numel(p.shape) * t.element_size()
    return read, total


def _stored_key(key, wm):
    """key as the folder stores it: whole, or without the first component
    (transformer., model.), as a checkpoint saved from the model without
    its output head names it (GPT-2's own files do)."""
    if key in wm:
        return key
    base = key.split(".", 1)[-1]
    return base if base in wm else None


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def load_report(folder, parts, to_hf, keep, device):
    """load(), timed, with every rank's bytes; a line for the log."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    read, total = load(folder, parts, to_hf, keep)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    dt = time.perf_counter() - t0
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, (read, total, dt))
    slowest = max(e[2] for e in every)
    whole = sum(e[1] for e in every)  # counted once per rank that needs the tensor
    return (f"loaded {folder}: ranks read {', '.join(f'{e[0] / 1e9:.3f}' for e in every)} GB "
            f"(of {max(e[1] for e in every) / 1e9:.3f} GB the largest rank's tensors span, {whole / 1e9:.3f} GB over all ranks) "
            f"in {slowest:.2f} s, {sum(e[0] for e in every) / 1e9 / max(slowest, 1e-9):.2f} GB/s together"), every


class ShardWriter:
    """Collects whole tensors and writes them in files of at most
    SHARD_BYTES, named by pipeline stage and order."""

    def __init__(self, folder, prefix):
        self.folder, self.prefix = folder, prefix
        self.pending, self.size, self.count = {}, 0, 0
        self.files, self.total = {}, 0

    def add(self, name, tensor):
        if self.size and self.size + tensor.numel() * tensor.element_size() > SHARD_BYTES:
            self.flush()
        self.pending[name] = tensor
        self.size += tensor.numel() * tensor.element_size()

    def flush(self):
        if not self.pending:
            return
        from safetensors.torch import save_file
        name = f"{self.prefix}-{self.count:03d}.safetensors"
        save_file(self.pending, os.path.join(self.folder, name), metadata={"format": "pt"})
        self.files[name] = sorted(self.pending)
        self.total += self.size
        self.pending, self.size, self.count = {}, 0, self.count + 1


def begin(folder):
    """Makes FOLDER.partial empty (collective)."""
    tmp = folder + PARTIAL
    if dist.get_rank() == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
    dist.barrier()
    return tmp


def finish(tmp, writer, dtype):
    """Gathers every writer's files into the manifest, written last."""
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, (writer.files, writer.total) if writer else ({}, 0))
    if dist.get_rank() == 0:
        files = {}
        for f, _ in every:
            files.update(f)
        manifest = {"files": files, "size_bytes": sum(t for _, t in every), "dtype": dtype}
        with open(os.path.join(tmp, MANIFEST), "w") as f:
            json.dump(manifest, f, indent=2)
    dist.barrier()


def gathered(parts, keep):
    """(fqn, whole tensor) for each kept parameter, gathered from its
    shards; every rank of a pipeline stage must iterate it in step."""
    from torch.distributed.tensor import DTensor
    for part in parts:
        for fqn, p in part.named_parameters():
            if keep(fqn) and not _tied_copy(part, fqn):
                yield fqn, (p.full_tensor() if isinstance(p, DTensor) else p).detach()


def _tied_copy(part, fqn):
    """The last pipeline stage's copy of a tied embedding: the first stage
    exports the weight."""
    return fqn.startswith("tok_embeddings.") and not getattr(part, "embeds_input", True)


def export_model(folder, parts, to_hf, keep, dtype, is_writer, stage):
    """Writes the model's weights under transformers' names (collective)."""
    tmp = begin(folder)
    writer = ShardWriter(tmp, f"stage-{stage:03d}") if is_writer else None
    fused = {}
    for fqn, full in gathered(parts, keep):
        if writer is None:
            continue  # the gather is collective; only the writer keeps the tensor
        s = slot(to_hf(fqn))
        t = full.to(DTYPES[dtype]).cpu()
        t = t.t() if s.transposed else t
        if s.parts > 1:
            # A block of a fused tensor (GPT-2's c_attn) waits for the others.
            blocks = fused.setdefault(s.key, {})
            blocks[s.part] = t
            if len(blocks) < s.parts:
                continue
            blocks = fused.pop(s.key)
            t = torch.cat([blocks[i] for i in range(s.parts)], dim=-1 if s.transposed else 0)
        writer.add(s.key, t.contiguous())
    if writer:
        writer.flush()
    finish(tmp, writer, dtype)


def adapters_at_rank0(parts, is_writer):
    """Every LoRA adapter, whole, as {fqn: CPU tensor} at rank 0 and None
    elsewhere (collective): each pipeline stage's writer sends its stage's
    adapters, gathered from their shards, to rank 0."""
    mine = {}
    for fqn, full in gathered(parts, lambda k: ".lora_a." in k or ".lora_b." in k):
        if is_writer:
            mine[fqn] = full.cpu().contiguous()
    every = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(mine, every, dst=0)
    if dist.get_rank() != 0:
        return None
    return {fqn: t for d in every for fqn, t in d.items()}


def export_adapters(folder, adapters, peft_tensors):
    """Writes LoRA adapters (adapters_at_rank0's) under PEFT's names (the
    family's peft_tensors), in fp32 as PEFT keeps them, as one file
    (collective; rank 0 writes)."""
    from safetensors.torch import save_file
    tmp = begin(folder)
    if dist.get_rank() == 0:
        tensors = {k: t.float().contiguous() for k, t in peft_tensors(adapters).items()}
        save_file(tensors, os.path.join(tmp, "adapter_model.safetensors"), metadata={"format": "pt"})
        manifest = {"files": {"adapter_model.safetensors": sorted(tensors)},
                    "size_bytes": sum(t.numel() * 4 for t in tensors.values()), "dtype": "float32"}
        with open(os.path.join(tmp, MANIFEST), "w") as f:
            json.dump(manifest, f, indent=2)
    dist.barrier()
