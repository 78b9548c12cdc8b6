"""Checkpoints through torch.distributed.checkpoint (DCP): every rank writes
its own shards in parallel, and a checkpoint loads into any layout, since
keys are parameter names (optimizer states flattened to them too).

A checkpoint is written to step-N.partial, renamed to step-N by rank 0
once every rank is done, and marked complete by gpuflow.json, written last.
gpuflow.json also holds what is no tensor: the step, the loss, and under
fp16 the loss scaler's state (lossscale.LossScaler.state_dict), which a
resumed run continues from.
gpuflow (plugins/train/checkpoint.go) resumes from the complete one of the
highest step. Only the newest `keep` are kept.
"""

import json
import os
import re
import shutil

import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                     get_optimizer_state_dict, set_model_state_dict,
                                                     set_optimizer_state_dict)

MARKER = "gpuflow.json"
NAME = re.compile(r"^step-(\d+)$")
FLAT = StateDictOptions(flatten_optimizer_state_dict=True)


def step_dir(root, step):
    return os.path.join(root, f"step-{step:08d}")


def model_state(parts, keep=lambda fqn: True):
    sd = {}
    for p in parts:
        sd.update({k: v for k, v in get_model_state_dict(p).items() if keep(k)})
    return sd


def optim_states(parts, optimizers):
    return [get_optimizer_state_dict(p, o, options=FLAT) for p, o in zip(parts, optimizers)]


def save(path, parts, optimizers, marker, keep=lambda fqn: True, with_optim=True):
    """Writes a complete checkpoint folder at path (collective)."""
    tmp = path + ".partial"
    if dist.get_rank() == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(os.path.dirname(path), exist_ok=True)
    dist.barrier()
    state = {"model": model_state(parts, keep)}
    if with_optim:
        state["optim"] = _merge(optim_states(parts, optimizers))
    dcp.save(state, checkpoint_id=tmp)
    dist.barrier()
    if dist.get_rank() == 0:
        shutil.rmtree(path, ignore_errors=True)
        os.rename(tmp, path)
        with open(os.path.join(path, MARKER), "w") as f:
            json.dump(marker, f)
    dist.barrier()


def _merge(dicts):
    out = {}
    for d in dicts:
        out.update(d)
    return out


def load(path, parts, optimizers, keep=lambda fqn: True, with_optim=True):
    """Loads a checkpoint into the parts and their optimizers (collective);
    returns its marker."""
    per_part = [{k: v for k, v in get_model_state_dict(p).items() if keep(k)} for p in parts]
    state = {"model": _merge(per_part)}
    optim = optim_states(parts, optimizers) if with_optim else []
    if with_optim:
        state["optim"] = _merge(optim)
    dcp.load(state, checkpoint_id=path)
    for p, sd in zip(parts, per_part):
        set_model_state_dict(p, {k: state["model"][k] for k in sd}, options=StateDictOptions(strict=False))
    for p, o, sd in zip(parts, optimizers, optim):
        set_optimizer_state_dict(p, o, {k: state["optim"][k] for k in sd}, options=FLAT)
    with open(os.path.join(path, MARKER)) as f:
        return json.load(f)


def load_weights(path, parts, keep):
    """Loads only the weights keep selects (a finetune's base model)."""
    per_part = [{k: v for k, v in get_model_state_dict(p).items() if keep(k)} for p in parts]
    state = {"model": _merge(per_part)}
    dcp.load(state, checkpoint_id=path)
    for p, sd in zip(parts, per_part):
        set_model_state_dict(p, {k: state["model"][k] for k in sd}, options=StateDictOptions(strict=False))


def prune(root, keep, protect=()):
    """Removes all but the newest `keep` complete checkpoints (rank 0)."""
    if dist.get_rank() != 0 or keep <= 0:
        return
    found = sorted((int(m.group(1)), e) for e in os.listdir(root) if (m := NAME.match(e)))
    for _, name in found[:-keep]:
        path = os.path.join(root, name)
        if path not in protect:
            shutil.rmtree(path, ignore_errors=True)
