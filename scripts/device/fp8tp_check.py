"""fp8 under tensor and sequence parallelism, and LoRA over an fp8
frozen base under tensor, pipeline and data parallelism, checked on CPU
ranks over gloo: each layout builds the trainer's model with the
trainer's own code (model.py, fp8.convert or lora.add_adapters with fp8,
parallel.apply_tp, the pipeline schedule and apply_fsdp, the loss
parallelism), trains it on the same data for 50 steps, and must give the
single process's losses of the same precision within TOLERANCE at every
step and its gradients of the first step within GRAD_TOLERANCE (a
data-parallel or pipelined layout's within fp8's own rounding: see
below). A LoRA run must also leave every base weight as it started, bit
for bit, with no gradient. A single fp32 process (and an fp32 LoRA one)
and an fp32 tp2 run with sequence parallelism beside them show how far
fp8 itself moves the loss.

  python3 fp8tp_check.py WORK --trainer DIR [--md OUT.md] [--timeout S] [--only PRECISION,...]

--only runs those precisions' layouts alone, with the single processes
their gradients are held to (fp8-lora: fp32-lora.ref).

torch._scaled_mm runs fp8 products on the CPU too, so the check needs no
GPU. The script runs the training steps itself, with the trainer's
modules, so that it can hold every layout's first-step gradients and base
weights to the single process's. fp8 products on the CPU are slow
(the single fp8 process reached step 20 in 75 s on 16 cores, beside the
other runs): give the check a few minutes. Each run writes its losses
every 10 steps, so one stopped by --timeout still compares the steps it
reached.
"""

import argparse
import concurrent.futures
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from train_correctness import last_line, launch, markov_tokens, stop_runs_on_sigterm  # noqa: E402

STEPS = 50
# Every rank casts to the fp8 values one process casts (the scales come
# from all-reduced maxima), so the layouts differ only in the order of
# fp32 sums, and in the rare element that such a difference moves across
# an fp8 rounding boundary: losses within 0.1% at every step (the bar of
# the fp32 layouts' check), step-1 gradients within 1% of each tensor's
# largest value.
TOLERANCE = 1e-3
GRAD_TOLERANCE = 1e-2
# Data-parallel ranks each scale their own activations and gradients (one
# maximum per rank's micro-batch, as torchao's per-tensor scaling does;
# only the weights, gathered whole, share one), and so does a pipeline
# stage, per micro-batch, so their fp8 values are not one process's: such
# a layout's step-1 gradients are held to fp8's own rounding instead, the
# single fp8 process's difference from the single fp32 one of the same
# model (with or without LoRA).

# Small: fp8 products on the CPU run far slower than fp32 ones. Biases on
# q, k, v and o, so that split and whole biases are checked beside the
# weights.
MODEL = {"layers": 2, "hidden": 64, "ffn_hidden": 128, "heads": 4, "kv_heads": 2, "vocab": 256, "seq_len": 32,
         "qkv_bias": True, "o_bias": True}
BATCH, LR, SEED = 8, 1e-3, 1
# LoRA trains the adapters alone, from B = 0, at a larger rate; its
# targets leave some layers without adapters (k, v, gate, down), so the
# frozen fp8 layers with and without adapters are both checked, split by
# columns and by rows. The base's biases start non-zero, so that the
# frozen biases are checked too.
LORA = {"rank": 8, "alpha": 16, "targets": ["q_proj", "o_proj", "up_proj"], "dropout": 0.0}
LORA_LR = 5e-3
# A pipeline step's micro-batches.
MICROBATCHES = 2

LAYOUTS = {
    "ref": {"tp": 1, "dp": 1},
    "tp2": {"tp": 2, "dp": 1},
    "tp2-sp": {"tp": 2, "dp": 1, "sp": True},
    "tp2-sp-full": {"tp": 2, "dp": 1, "sp": True, "recompute": "full"},
    "dp2tp2-sp-fsdp": {"tp": 2, "dp": 2, "sp": True, "fsdp": True},
    "pp2": {"tp": 1, "dp": 1, "pp": 2},
    "dp2-fsdp": {"tp": 1, "dp": 2, "fsdp": True},
}
RUNS = [("fp32", "ref"), ("fp32", "tp2-sp"), ("fp8", "ref"), ("fp8", "tp2"), ("fp8", "tp2-sp"), ("fp8", "tp2-sp-full"),
        ("fp8", "dp2tp2-sp-fsdp"), ("fp32-lora", "ref"), ("fp8-lora", "ref"), ("fp8-lora", "tp2"), ("fp8-lora", "tp2-sp"),
        ("fp8-lora", "tp2-sp-full"), ("fp8-lora", "pp2"), ("fp8-lora", "dp2-fsdp")]
# Each precision's gradients against the fp32 process of the same model:
# fp8's own rounding.
ROUNDING = {"fp8": "fp32", "fp8-lora": "fp32-lora"}


def ranks(layout):
    L = LAYOUTS[layout]
    return L["tp"] * L["dp"] * L.get("pp", 1)


def rounded_alone(layout):
    """Whether a layout's fp8 values are one process's: not where data
    ranks or pipeline micro-batches take their own maxima."""
    return LAYOUTS[layout]["dp"] == 1 and LAYOUTS[layout].get("pp", 1) == 1


def tokens():
    """The steps' batches from a learnable stream (train_correctness.markov_tokens)."""
    n = STEPS * BATCH * (MODEL["seq_len"] + 1)
    return markov_tokens(MODEL["vocab"], n).reshape(STEPS, BATCH, MODEL["seq_len"] + 1)


def worker(a):
    """One rank of one layout (under torchrun): 50 steps; the ranks holding
    a stage's whole gradients write them for the first step, rank 0 the
    losses and, under LoRA, every rank whether its base weights stayed."""
    import types

    import torch
    import torch.distributed as dist
    sys.path.insert(0, a.trainer)
    import lora as LoRA
    import parallel

    L = dict({"sp": False, "fsdp": False, "recompute": "none", "pp": 1}, **LAYOUTS[a.layout])
    lora = a.precision.endswith("-lora")
    dist.init_process_group("gloo")
    layout = types.SimpleNamespace(pp=L["pp"], vp=1, dp=L["dp"], tp=L["tp"], fsdp=L["fsdp"], zero=0)
    mesh = parallel.build_mesh(layout, "cpu")
    pp_rank, tp_rank, dp_rank = (mesh[d].get_local_rank() for d in ("pp", "tp", "dp"))
    parts, stages = build(a, L, layout, mesh, pp_rank, lora)
    base = {k: v.detach().clone() for p in parts for k, v in local_state(p).items() if not LoRA.is_adapter(k)} if lora else {}
    params = [p for part in parts for p in part.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=LORA_LR if lora else LR, weight_decay=0.1)
    step_fn = pipelined(parts, stages, pp_rank, mesh, L) if L["pp"] > 1 else whole(parts[0], mesh, L)
    data, per = torch.from_numpy(tokens()), BATCH // L["dp"]
    last = pp_rank == L["pp"] - 1
    losses = []
    os.makedirs(a.out, exist_ok=True)
    for step in range(STEPS):
        batch = data[step, dp_rank * per:(dp_rank + 1) * per]
        loss = step_fn(batch)
        if step == 0:
            save_grads(a.out, parts, pp_rank, tp_rank == 0 and dp_rank == 0)
        opt.step()
        opt.zero_grad()
        # Each data replica's last stage counted once.
        mine = loss.detach().clone() if last and tp_rank == 0 else torch.zeros(())
        dist.all_reduce(mine)
        losses.append(float(mine) / L["dp"])
        if dist.get_rank() == 0 and (step % 10 == 9 or step == STEPS - 1):
            # Written as it goes, so a run stopped early still compares.
            write_json(os.path.join(a.out, "losses.json"), losses)
    if lora:
        write_json(os.path.join(a.out, f"base-{dist.get_rank()}.json"), base_report(parts, base))
    dist.destroy_process_group()


def build(a, L, layout, mesh, pp_rank, lora):
    """This rank's model chunks, built, initialised and split as the trainer
    does; the base's biases start non-zero under LoRA."""
    import torch
    import fp8
    import lora as LoRA
    import model as M
    import parallel
    from config import LoRAConfig

    def make(args):
        m = M.Transformer(args)
        if lora:
            LoRA.add_adapters(m, LoRAConfig(**LORA), fp8=a.precision.startswith("fp8"))
        elif a.precision == "fp8":
            fp8.convert(m)
        return m

    parts, stages = parallel.build_parts(M.ModelArgs(**MODEL), layout, pp_rank, make)
    parts = [p for _, p in parts]
    for part in parts:
        part.to_empty(device="cpu")
        M.init_full(part, SEED, "cpu")
        if lora:
            with torch.no_grad():
                for fqn, p in part.named_parameters():
                    if fqn.endswith(".bias"):
                        p.normal_(0, 0.02, generator=torch.Generator().manual_seed(M.param_seed(SEED + 1, fqn)))
        if L["tp"] > 1:
            parallel.apply_tp(part, mesh["tp"], L["sp"])
            if lora:
                LoRA.freeze_base(part)
        parallel.set_recompute(part, L["recompute"])
        parallel.apply_fsdp(part, *parallel.data_parallel(mesh, layout), compute_dtype=torch.float32)
    return parts, stages


def whole(model, mesh, L):
    """One step's forward and backward without a pipeline."""
    import parallel
    loss_fn = parallel.vocab_parallel_loss(mesh["tp"]) if L["tp"] > 1 else parallel.cross_entropy

    def step(batch):
        with parallel.loss_context(L["tp"] > 1):
            loss = loss_fn(model(batch[:, :-1]), batch[:, 1:])
            loss.backward()
        return loss
    return step


def pipelined(parts, stages, pp_rank, mesh, L):
    """One step through the trainer's pipeline schedule, MICROBATCHES
    micro-batches; the last stage returns their mean loss."""
    import torch
    import parallel
    from torch.distributed.pipelining import PipelineStage
    ids = parallel.stage_ids(pp_rank, L["pp"], 1)
    group = mesh["pp"].get_group()
    schedule, scale = parallel.pipeline_schedule([PipelineStage(p, s, stages, torch.device("cpu"), group=group)
                                                  for s, p in zip(ids, parts)], MICROBATCHES, parallel.cross_entropy)

    def step(batch):
        # The schedule checks its inputs' strides against contiguous ones.
        if pp_rank == 0:
            schedule.step(batch[:, :-1].contiguous())
            return torch.zeros(())
        losses = []
        schedule.step(target=batch[:, 1:].contiguous(), losses=losses)
        return torch.stack([x.detach() for x in losses]).mean() * scale
    return step


def local_state(part):
    from torch.distributed.tensor import DTensor
    return {k: (v.to_local() if isinstance(v, DTensor) else v) for k, v in part.state_dict().items()}


def save_grads(out, parts, pp_rank, writer):
    """The first step's gradients, whole (gathering is collective: every
    rank takes part); one rank of each pipeline stage writes them."""
    import torch
    from torch.distributed.tensor import DTensor
    grads, frozen_with_grad = {}, []
    for part in parts:
        for name, p in part.named_parameters():
            if p.grad is None:
                continue
            if not p.requires_grad:
                frozen_with_grad.append(name)
            g = p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad
            grads[name] = g.detach().clone()
    if writer:
        torch.save(grads, os.path.join(out, f"grads-{pp_rank}.pt"))
        write_json(os.path.join(out, f"frozen-grads-{pp_rank}.json"), frozen_with_grad)


def base_report(parts, before):
    """This rank's base weights after training against before: how many
    tensors changed, bit for bit, and how many have a gradient."""
    import torch
    now = {k: v for p in parts for k, v in local_state(p).items() if k in before}
    changed = [k for k in before if not torch.equal(now[k], before[k])]
    with_grad = [n for p in parts for n, q in p.named_parameters() if not q.requires_grad and q.grad is not None]
    return {"tensors": len(before), "changed": changed, "with_grad": with_grad}


def write_json(path, value):
    with open(path + ".partial", "w") as f:
        json.dump(value, f)
    os.replace(path + ".partial", path)


def run(work, trainer, precision, layout, timeout):
    name = f"{precision}.{layout}"
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    world = ranks(layout)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    t0 = time.time()
    rc = launch([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", f"--nproc-per-node={world}",
                 os.path.abspath(__file__), "--worker", "--trainer", trainer, "--precision", precision,
                 "--layout", layout, "--out", folder], folder, env=env, timeout=timeout)
    return name, rc, time.time() - t0


def result(work, name):
    """A run's losses, its first step's gradients (every stage's), and
    what went wrong where they are missing."""
    import glob
    import torch
    folder = os.path.join(work, name)
    path = os.path.join(folder, "losses.json")
    parts = sorted(glob.glob(os.path.join(folder, "grads-*.pt")))
    if not os.path.exists(path) or not parts:
        tail = last_line(os.path.join(folder, "stderr.log"))
        return None, None, tail[:300] or "no result"
    grads = {}
    for part in parts:
        grads.update(torch.load(part))
    return json.load(open(path)), grads, ""


def base_kept(work, name):
    """Under LoRA: whether every rank's base weights ended as they started,
    bit for bit, and none had a gradient, in words."""
    import glob
    reports = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(work, name, "base-*.json")))]
    frozen = [n for p in sorted(glob.glob(os.path.join(work, name, "frozen-grads-*.json"))) for n in json.load(open(p))]
    if not reports:
        return "no base report", False
    changed = sorted({k for r in reports for k in r["changed"]})
    with_grad = sorted(set(frozen) | {k for r in reports for k in r["with_grad"]})
    tensors = sum(r["tensors"] for r in reports)
    good = not changed and not with_grad
    words = f"base: {tensors} tensors on {len(reports)} ranks, {len(changed)} changed, {len(with_grad)} with a gradient"
    return words, good


def grad_difference(got, ref):
    """The largest difference over the largest reference value, worst tensor."""
    if sorted(got) != sorted(ref):
        return float("inf"), "names differ"
    worst = max(((got[k] - ref[k]).abs().max() / ref[k].abs().max().clamp(min=1e-30)).item() for k in ref)
    return worst, ""


def rounding(work, precision):
    """fp8's own rounding of a model's step-1 gradients: the single fp8
    process's difference from the single fp32 one; 0 for fp32."""
    if precision not in ROUNDING:
        return 0.0
    got, ref = result(work, f"{precision}.ref")[1], result(work, f"{ROUNDING[precision]}.ref")[1]
    return grad_difference(got, ref)[0] if got and ref else float("nan")


def compare(work, runs):
    rows = ["| precision | layout | ranks | loss at 1 | last loss at step | max relative loss difference | step-1 gradients: max difference | within tolerance |",
            "|---|---|---|---|---|---|---|---|"]
    ok = True
    for precision in dict.fromkeys(p for p, _ in runs):
        ref_losses, ref_grads, err = result(work, f"{precision}.ref")
        good = ref_losses is not None and len(ref_losses) == STEPS and ref_losses[-1] < ref_losses[0]
        note = ""
        if precision.endswith("-lora"):
            note, kept = base_kept(work, f"{precision}.ref")
            good = good and kept
        ok = ok and good
        rows.append(f"| {precision} | 1 process (reference) | 1 | {ref_losses[0]:.4f} | {ref_losses[-1]:.4f} at {len(ref_losses)} | | | "
                    f"{'yes' if good else 'NO'} {note} |"
                    if ref_losses else f"| {precision} | 1 process (reference) | 1 | | | | | NO: {err} |")
        own = rounding(work, precision)
        for p, layout in runs:
            if p != precision or layout == "ref":
                continue
            line, good = row(work, p, layout, ref_losses, ref_grads, own)
            rows.append(line)
            ok = ok and good
    return "\n".join(rows), ok


def row(work, precision, layout, ref_losses, ref_grads, own_rounding):
    losses, grads, err = result(work, f"{precision}.{layout}")
    if losses is None or ref_losses is None:
        return f"| {precision} | {layout} | {ranks(layout)} | | | | | NO: {err or 'no reference'} |", False
    common = min(len(losses), len(ref_losses))
    rel = max(abs(g - r) / r for g, r in zip(losses[:common], ref_losses[:common]))
    gd, why = grad_difference(grads, ref_grads)
    bar = GRAD_TOLERANCE if rounded_alone(layout) or precision not in ROUNDING else max(GRAD_TOLERANCE, own_rounding)
    good = common == STEPS and rel <= TOLERANCE and gd <= bar
    note = ""
    if precision.endswith("-lora"):
        note, kept = base_kept(work, f"{precision}.{layout}")
        good = good and kept
    steps = "" if common == STEPS else f" (steps 1-{common} of {STEPS})"
    return (f"| {precision} | {layout} | {ranks(layout)} | {losses[0]:.4f} | {losses[-1]:.4f} at {len(losses)} | {rel:.2e}{steps} | "
            f"{gd:.2e} (at most {bar:.2e}) {why} | {'yes' if good else 'NO'} {note} |"), good


def gap(work, fp8, fp32):
    """fp8's largest relative loss difference from fp32, single processes,
    over the steps both ran."""
    a, b = result(work, f"{fp8}.ref")[0], result(work, f"{fp32}.ref")[0]
    return max(abs(x - y) / y for x, y in zip(a, b)) if a and b else float("nan")


def selected(only):
    """RUNS, or those of the named precisions and the single processes
    their gradients are held to."""
    if not only:
        return RUNS
    wanted = set(only.split(","))
    wanted |= {ROUNDING[p] for p in wanted if p in ROUNDING}
    return [(p, l) for p, l in RUNS if p in wanted and (l == "ref" or p in only.split(","))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", nargs="?")
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--md")
    ap.add_argument("--timeout", type=int, default=600, help="seconds a layout may run")
    ap.add_argument("--only", default="", help="precisions to run: fp32, fp8, fp32-lora, fp8-lora")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--precision")
    ap.add_argument("--layout")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.worker:
        worker(a)
        return
    stop_runs_on_sigterm()
    if not a.work:
        ap.error("WORK, the folder the runs write into, is required")
    trainer = os.path.abspath(a.trainer)
    runs = selected(a.only)
    with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
        for f in concurrent.futures.as_completed([pool.submit(run, a.work, trainer, p, l, a.timeout) for p, l in runs]):
            name, rc, dt = f.result()
            print(f"{name}: exit {rc} in {dt:.0f} s", flush=True)
    table, ok = compare(a.work, runs)
    gaps = ", ".join(f"{p} against {r}: {gap(a.work, p, r):.2e}" for p, r in ROUNDING.items() if (p, "ref") in runs and (r, "ref") in runs)
    note = (f"tolerance: losses {TOLERANCE:.0e} relative at every step, step-1 gradients {GRAD_TOLERANCE:.0e} of each tensor's "
            f"largest value, against the single process of the same precision; single processes, largest loss difference: {gaps}")
    print(note)
    print(table)
    if a.md:
        with open(a.md, "w") as f:
            f.write(note + "\n\n" + table + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
