"""Loss parallelism, tied embeddings, LoRA and loss masks under tensor and
pipeline parallelism, checked on CPU ranks over gloo: each layout trains
the same model, seed and data for 50 steps and must give the single
process's losses within TOLERANCE at every step. LoRA runs export their
adapters as PEFT, the others their model as a Hugging Face folder; each
export must hold the single process's tensors, each written once. The
masked groups train on the same stream with a loss mask beside it (runs
of prompt and reply tokens, as chat records have), and limits_masks.py
checks that prompt tokens' logits get no gradient under tp2 and pp2.
The fp16 group trains with precision = "fp16": CPU ranks compute in fp32,
so there its loss scaling (scaled backward, unscaled clipping, the
overflow flag all-reduced over the ranks) must change nothing, against
its own single process and against the untied group's, which trains
without loss scaling.

  python3 limits_check.py WORK --trainer DIR [--md OUT.md] [--jobs N] [--only GROUP.LAYOUT,...]

--only runs those layouts and their groups' references alone.

Every run is the trainer itself (DIR/train.py) under torchrun with
device = "cpu", so the check needs no GPU.
"""

import argparse
import concurrent.futures
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from train_correctness import last_line, launch, markov_tokens, stop_runs_on_sigterm, write_indexed, write_shard  # noqa: E402

STEPS = 50
# CPU ranks train in fp32; the layouts only reorder sums (all-reduces,
# split matrix products, the softmax's sums over vocabulary shards), so
# losses agree to rounding: 0.1% of the loss at every step.
TOLERANCE = 1e-3
# Adapters after 50 steps (fp32), as the largest difference over the
# largest value; exported models are bf16, whose rounding steps are 0.4%.
ADAPTER_TOLERANCE = 1e-3
EXPORT_TOLERANCE = 1e-2

MODEL = {"layers": 4, "hidden": 128, "ffn_hidden": 384, "heads": 4, "kv_heads": 2, "vocab": 512, "seq_len": 64,
         "activation": "swiglu", "architecture": "LlamaForCausalLM", "rope_theta": 500000.0, "norm_eps": 1e-5}
LAYOUT = {"tp": 1, "pp": 1, "dp": 1, "cp": 1, "vp": 1, "zero": 0, "fsdp": False, "micro_batch": 2, "global_batch": 8,
          "recompute": "none", "sequence_parallel": False, "precision": "bf16"}
LORA = {"rank": 8, "alpha": 16, "targets": ["all-linear"], "dropout": 0.0}

# Each group is one model and stage type; its layouts are checked against
# its single process ("ref").
GROUPS = {
    "untied": {"tied": False, "lora": False},
    "tied": {"tied": True, "lora": False},
    "lora": {"tied": False, "lora": True},
    "lora-tied": {"tied": True, "lora": True},
    "masked": {"tied": False, "lora": False, "masked": True},
    "masked-lora": {"tied": False, "lora": True, "masked": True},
    "fp16": {"tied": False, "lora": False, "precision": "fp16", "baseline": "untied"},
}
LAYOUTS = {
    "ref": {},
    "tp2": {"tp": 2, "sequence_parallel": True},
    "tp2-nosp": {"tp": 2},
    "pp2": {"pp": 2},
    "pp2vp2": {"pp": 2, "vp": 2},
    "tp2pp2": {"tp": 2, "pp": 2, "sequence_parallel": True},
    "dp2pp2": {"dp": 2, "pp": 2},
    "dp2tp2-fsdp": {"dp": 2, "tp": 2, "fsdp": True, "recompute": "full"},
    "dp2": {"dp": 2, "fsdp": True},
}
RUNS = {
    "untied": ["ref", "tp2", "tp2-nosp", "pp2", "tp2pp2", "dp2tp2-fsdp"],
    "tied": ["ref", "tp2", "tp2-nosp", "pp2", "pp2vp2", "tp2pp2", "dp2pp2", "dp2tp2-fsdp"],
    "lora": ["ref", "tp2", "tp2-nosp", "pp2", "tp2pp2", "dp2tp2-fsdp"],
    "lora-tied": ["ref", "tp2", "tp2pp2"],
    "masked": ["ref", "tp2", "pp2", "pp2vp2", "tp2pp2", "dp2pp2", "dp2tp2-fsdp"],
    "masked-lora": ["ref", "tp2pp2"],
    "fp16": ["ref", "tp2", "pp2", "dp2"],
}
# The masked-gradient property's layouts (limits_masks.py), run with the
# masked group.
MASK_LAYOUTS = ["tp2", "pp2"]


def markov(prefix, vocab, tokens):
    """A learnable stream (train_correctness.markov_tokens) as a shard."""
    write_shard(prefix, markov_tokens(vocab, tokens), vocab)


def chat_mask(prefix, tokens):
    """A loss mask beside the stream PREFIX, as chat records have one:
    runs of 10 to 50 prompt tokens (0), then as many reply tokens (1)."""
    rng = np.random.default_rng(1)
    out, i, value = np.empty(tokens, np.uint8), 0, 0
    while i < tokens:
        n = int(rng.integers(10, 51))
        out[i : i + n] = value
        i, value = i + n, 1 - value
    write_indexed(prefix + ".mask", out, np.uint8, 1)


def config(work, group, layout):
    g, name = GROUPS[group], f"{group}.{layout}"
    folder = os.path.join(work, name)
    cfg = {"stage": f"{'finetune' if g['lora'] else 'pretrain'}.{name}", "type": "finetune" if g["lora"] else "pretrain",
           "model": dict(MODEL, tied_embeddings=g["tied"]),
           "layout": dict(LAYOUT, **LAYOUTS[layout], precision=g.get("precision", LAYOUT["precision"])),
           "data": [os.path.join(work, "markov")], "steps": STEPS, "lr": 5e-3 if g["lora"] else 1e-3, "min_lr": 1e-4,
           "schedule": "cosine", "warmup_steps": 5, "weight_decay": 0.1, "seed": 1, "checkpoint_every": 0, "checkpoint": False,
           "checkpoint_dir": os.path.join(folder, "ckpt"), "keep_checkpoints": 1, "compile": False, "peak_flops": 1e12,
           "device": "cpu"}
    if g.get("masked"):
        cfg["masks"] = [os.path.join(work, "markov.mask")]
    if g["lora"]:
        cfg["lora"] = LORA
        cfg["export_peft"] = os.path.join(folder, "peft")
        cfg["checkpoint"] = True  # the last checkpoint holds adapters.safetensors
    else:
        cfg["export_hf"] = os.path.join(folder, "hf")
    return folder, cfg


def run(work, trainer, group, layout):
    folder, cfg = config(work, group, layout)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "config.json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    l = cfg["layout"]
    world = l["tp"] * l["pp"] * l["dp"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    t0 = time.time()
    rc = launch([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", f"--nproc-per-node={world}",
                 os.path.join(trainer, "train.py"), "--config", path], folder, env)
    return f"{group}.{layout}", rc, time.time() - t0


def mask_run(work, here, trainer, layout):
    """limits_masks.py under torchrun on two CPU ranks."""
    folder = os.path.join(work, f"mask-grads.{layout}")
    os.makedirs(folder, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    t0 = time.time()
    rc = launch([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", "--nproc-per-node=2",
                 os.path.join(here, "limits_masks.py"), layout, "--trainer", trainer,
                 "--out", os.path.join(folder, "result.json")], folder, env)
    return f"mask-grads.{layout}", rc, time.time() - t0


def mask_table(work, layouts):
    """The masked-gradient property's rows, and whether every one holds."""
    rows = ["| layout | ranks | prompt tokens' logits: largest gradient | reply tokens without gradient | loss (one process) | "
            "loss, relative difference | output weight's gradient, relative difference | holds |",
            "|---|---|---|---|---|---|---|---|"]
    ok = True
    for layout in layouts:
        path = os.path.join(work, f"mask-grads.{layout}", "result.json")
        if not os.path.exists(path):
            err = last_line(os.path.join(work, f"mask-grads.{layout}", "stderr.log"))
            rows.append(f"| {layout} | 2 | | | | | | NO: {err[:300] or 'no result'} |")
            ok = False
            continue
        with open(path) as f:
            r = json.load(f)
        rows.append(f"| {layout} | {r['ranks']} | {r['prompt_grad_max']:.1e} | {r['reply_without_grad']} of {r['reply_tokens']} | "
                    f"{r['loss']:.4f} ({r['ref_loss']:.4f}) | {r['loss_rel']:.1e} | {r['grad_rel']:.1e} | {'yes' if r['holds'] else 'NO'} |")
        ok = ok and r["holds"]
    return "\n".join(rows), ok


def losses(work, name):
    out, err = {}, ""
    path = os.path.join(work, name, "stdout.log")
    lines = []
    if os.path.exists(path):
        with open(path) as f:
            lines = f.readlines()
    for line in lines:
        if line.startswith("{"):
            e = json.loads(line)
            if e["event"] == "step":
                out[e["step"]] = e["loss"]
            elif e["event"] == "error":
                err = f"{e['summary']}: {e['detail']}"
    if not err and len(out) < STEPS:
        err = last_line(os.path.join(work, name, "stderr.log"))[:300] or "incomplete"
    return out, err


def exported(work, name, folder):
    """Every tensor an export wrote (before gpuflow names its files), by
    name; a name written twice is reported as such."""
    import glob
    from safetensors.torch import load_file
    out, twice = {}, []
    for path in sorted(glob.glob(os.path.join(work, name, folder + ".partial", "*.safetensors"))):
        for k, v in load_file(path).items():
            if k in out:
                twice.append(k)
            out[k] = v.float().numpy()
    return out, twice


def adapters(work, name):
    """The adapters.safetensors the trainer wrote into its last checkpoint."""
    import glob
    from safetensors.torch import load_file
    paths = glob.glob(os.path.join(work, name, "ckpt", "**", "adapters.safetensors"), recursive=True)
    return {k: v.float().numpy() for k, v in load_file(paths[0]).items()} if len(paths) == 1 else {}


def adapters_difference(work, group, layout):
    """adapters.safetensors against the single process's: the same names,
    the same values to bf16's rounding (the file keeps bf16)."""
    ref, got = adapters(work, f"{group}.ref"), adapters(work, f"{group}.{layout}")
    if not ref or not got:
        return "no adapters.safetensors", False
    if sorted(ref) != sorted(got):
        return f"adapters.safetensors keys differ ({len(got)} against {len(ref)})", False
    worst = max(float(np.abs(got[k] - ref[k]).max() / max(np.abs(ref[k]).max(), 1e-12)) for k in ref)
    return f"adapters.safetensors: {len(got)} tensors, {worst:.1e}", worst <= EXPORT_TOLERANCE


def export_difference(work, group, layout, folder, tolerance):
    (ref, _), (got, twice) = exported(work, f"{group}.ref", folder), exported(work, f"{group}.{layout}", folder)
    if not ref or not got:
        return f"no {folder} export", False
    if twice:
        return f"{len(twice)} tensors written twice ({twice[0]})", False
    if sorted(ref) != sorted(got):
        return f"keys differ ({len(got)} against {len(ref)})", False
    worst = max(float(np.abs(got[k] - ref[k]).max() / max(np.abs(ref[k]).max(), 1e-12)) for k in ref)
    return f"{folder}: {len(got)} tensors, {worst:.1e}", worst <= tolerance


def row(work, group, layout, ref):
    got, err = losses(work, f"{group}.{layout}")
    common = sorted(set(got) & set(ref))
    l = dict(LAYOUT, **LAYOUTS[layout])
    world = l["tp"] * l["pp"] * l["dp"]
    if len(common) < STEPS:
        return f"| {group} | {layout} | {world} | {len(got)} | | | | NO: {err} |", False
    rel = max(abs(got[s] - ref[s]) / ref[s] for s in common)
    good = rel <= TOLERANCE
    if GROUPS[group]["lora"]:
        peft, ok = export_difference(work, group, layout, "peft", ADAPTER_TOLERANCE)
        own, own_ok = adapters_difference(work, group, layout)
        peft, ok = f"{peft}; {own}", ok and own_ok
    else:
        peft, ok = export_difference(work, group, layout, "hf", EXPORT_TOLERANCE)
    good = good and ok
    return (f"| {group} | {layout} | {world} | {len(got)} | {got[1]:.4f} | {got[STEPS]:.4f} | {rel:.2e} | "
            f"{'yes' if good else 'NO'} {peft} |"), good


def baseline_row(work, group, ref):
    """A group's single process against its baseline group's (the same
    model and data, another precision)."""
    base = GROUPS[group]["baseline"]
    want, err = losses(work, f"{base}.ref")
    common = sorted(set(want) & set(ref))
    if len(common) < STEPS:
        return f"| {group} | 1 process against {base}'s | 1 | {len(ref)} | | | | NO: {err or 'incomplete'} |", False
    rel = max(abs(ref[s] - want[s]) / want[s] for s in common)
    good = rel <= TOLERANCE
    return (f"| {group} | 1 process against {base}'s | 1 | {len(ref)} | {want[1]:.4f} | {want[STEPS]:.4f} | {rel:.2e} | "
            f"{'yes' if good else 'NO'} |"), good


def compare(work, runs):
    rows = ["| model | layout | ranks | steps | loss at 1 | loss at 50 | max relative difference | within tolerance (export: tensors, max difference) |",
            "|---|---|---|---|---|---|---|---|"]
    ok = True
    for group, layouts in runs.items():
        ref, err = losses(work, f"{group}.ref")
        good = len(ref) == STEPS and ref[STEPS] < ref[1]
        ok = ok and good
        rows.append(f"| {group} | 1 process (reference) | 1 | {len(ref)} | {ref.get(1, float('nan')):.4f} | "
                    f"{ref.get(STEPS, float('nan')):.4f} | | {'yes' if good else 'NO ' + err} |")
        if "baseline" in GROUPS[group]:
            line, good = baseline_row(work, group, ref)
            rows.append(line)
            ok = ok and good
        for layout in layouts[1:]:
            line, good = row(work, group, layout, ref)
            rows.append(line)
            ok = ok and good
    return "\n".join(rows), ok


def main():
    stop_runs_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--md")
    ap.add_argument("--jobs", type=int, default=6)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    runs = RUNS
    if a.only:
        wanted = set(a.only.split(","))
        runs = {g: ["ref"] + [l for l in ls[1:] if f"{g}.{l}" in wanted] for g, ls in RUNS.items()}
        runs = {g: ls for g, ls in runs.items() if len(ls) > 1}
    # A baseline's single process runs with the group compared with it.
    jobs = [(g, l) for g, ls in runs.items() for l in ls]
    jobs += [(b, "ref") for b in {GROUPS[g]["baseline"] for g in runs if "baseline" in GROUPS[g]} if b not in runs]
    os.makedirs(a.work, exist_ok=True)
    markov(os.path.join(a.work, "markov"), MODEL["vocab"], 200_000)
    chat_mask(os.path.join(a.work, "markov"), 200_000)
    masks = MASK_LAYOUTS if "masked" in runs else []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = [pool.submit(mask_run, a.work, HERE, a.trainer, l) for l in masks]
        futures += [pool.submit(run, a.work, a.trainer, g, l) for g, l in jobs]
        for f in concurrent.futures.as_completed(futures):
            name, rc, dt = f.result()
            print(f"{name}: exit {rc} in {dt:.0f} s", flush=True)
    table, ok = compare(a.work, runs)
    if masks:
        grads, held = mask_table(a.work, masks)
        table, ok = table + "\n\nLoss masks' gradients:\n\n" + grads, ok and held
    print(f"tolerance: losses {TOLERANCE:.0e} relative at every step; exports (largest difference over largest value): "
          f"PEFT adapters {ADAPTER_TOLERANCE:.0e}, bf16 models {EXPORT_TOLERANCE:.0e}")
    print(table)
    if a.md:
        with open(a.md, "w") as f:
            f.write(table + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
