"""fp8 under tensor and sequence parallelism, checked on CPU ranks over
gloo: each layout builds the trainer's model with the trainer's own code
(model.py, fp8.convert, parallel.apply_tp and apply_fsdp, the loss
parallelism), trains it on the same data for 50 steps, and must give the
single process's fp8 losses within TOLERANCE at every step and its
gradients of the first step within GRAD_TOLERANCE (a data-parallel
layout's within fp8's own rounding: see below). A single fp32 process
and an fp32 tp2 run with sequence parallelism beside them show how far
fp8 itself moves the loss.

  python3 fp8tp_check.py WORK --trainer DIR [--md OUT.md] [--timeout S]

torch._scaled_mm runs fp8 products on the CPU too, so the check needs no
GPU; the trainer itself refuses fp8 on CPU ranks (it trains them in fp32),
so this script runs its training steps. fp8 products on the CPU are slow
(the single fp8 process reached step 20 in 75 s on 16 cores, beside the
other runs): give the check a few minutes. Each run writes its losses
every 10 steps, so one stopped by --timeout still compares the steps it
reached.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from train_correctness import markov_tokens  # noqa: E402

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
# only the weights, gathered whole, share one), so their fp8 values are
# not one process's: a data-parallel layout's step-1 gradients are held
# to fp8's own rounding instead, the single fp8 process's difference from
# the single fp32 one.

# Small: fp8 products on the CPU run far slower than fp32 ones. Biases on
# q, k, v and o, so that split and whole biases are checked beside the
# weights.
MODEL = {"layers": 2, "hidden": 64, "ffn_hidden": 128, "heads": 4, "kv_heads": 2, "vocab": 256, "seq_len": 32,
         "qkv_bias": True, "o_bias": True}
BATCH, LR, SEED = 8, 1e-3, 1

LAYOUTS = {
    "ref": {"tp": 1, "dp": 1},
    "tp2": {"tp": 2, "dp": 1},
    "tp2-sp": {"tp": 2, "dp": 1, "sp": True},
    "tp2-sp-full": {"tp": 2, "dp": 1, "sp": True, "recompute": "full"},
    "dp2tp2-sp-fsdp": {"tp": 2, "dp": 2, "sp": True, "fsdp": True},
}
RUNS = [("fp32", "ref"), ("fp32", "tp2-sp"), ("fp8", "ref"), ("fp8", "tp2"), ("fp8", "tp2-sp"), ("fp8", "tp2-sp-full"),
        ("fp8", "dp2tp2-sp-fsdp")]


def tokens():
    """The steps' batches from a learnable stream (train_correctness.markov_tokens)."""
    n = STEPS * BATCH * (MODEL["seq_len"] + 1)
    return markov_tokens(MODEL["vocab"], n).reshape(STEPS, BATCH, MODEL["seq_len"] + 1)


def worker(a):
    """One rank of one layout (under torchrun): 50 steps, rank 0 writes
    the losses and the first step's whole gradients."""
    import types

    import torch
    import torch.distributed as dist
    from torch.distributed.tensor import DTensor
    sys.path.insert(0, a.trainer)
    import fp8
    import model as M
    import parallel

    L = dict({"sp": False, "fsdp": False, "recompute": "none"}, **LAYOUTS[a.layout])
    dist.init_process_group("gloo")
    layout = types.SimpleNamespace(pp=1, dp=L["dp"], tp=L["tp"], fsdp=L["fsdp"], zero=0)
    mesh = parallel.build_mesh(layout, "cpu")
    with torch.device("meta"):
        m = M.Transformer(M.ModelArgs(**MODEL))
        if a.precision == "fp8":
            fp8.convert(m)
    m.to_empty(device="cpu")
    M.init_full(m, SEED, "cpu")
    if L["tp"] > 1:
        parallel.apply_tp(m, mesh["tp"], L["sp"])
    parallel.set_recompute(m, L["recompute"])
    parallel.apply_fsdp(m, *parallel.data_parallel(mesh, layout), compute_dtype=torch.float32)
    loss_fn = parallel.vocab_parallel_loss(mesh["tp"]) if L["tp"] > 1 else parallel.cross_entropy
    opt = torch.optim.AdamW(m.parameters(), lr=LR, weight_decay=0.1)
    data, per = torch.from_numpy(tokens()), BATCH // L["dp"]
    dp_rank = mesh["dp"].get_local_rank()
    losses, grads = [], {}
    os.makedirs(a.out, exist_ok=True)
    for step in range(STEPS):
        batch = data[step, dp_rank * per:(dp_rank + 1) * per]
        with parallel.loss_context(L["tp"]):
            loss = loss_fn(m(batch[:, :-1]), batch[:, 1:])
            loss.backward()
        if step == 0:
            for name, p in m.named_parameters():
                g = p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad
                grads[name] = g.detach().clone()
            if dist.get_rank() == 0:
                torch.save(grads, os.path.join(a.out, "grads.pt"))
        opt.step()
        opt.zero_grad()
        # Every rank of a tensor-parallel group holds its data rank's loss.
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(float(mean) / dist.get_world_size())
        if dist.get_rank() == 0 and (step % 10 == 9 or step == STEPS - 1):
            # Written as it goes, so a run stopped early still compares.
            path = os.path.join(a.out, "losses.json")
            with open(path + ".partial", "w") as f:
                json.dump(losses, f)
            os.replace(path + ".partial", path)
    dist.destroy_process_group()


def run(work, trainer, precision, layout, timeout):
    name = f"{precision}.{layout}"
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    world = LAYOUTS[layout]["tp"] * LAYOUTS[layout]["dp"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    t0 = time.time()
    with open(os.path.join(folder, "stdout.log"), "w") as out, open(os.path.join(folder, "stderr.log"), "w") as err:
        try:
            rc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", f"--nproc-per-node={world}",
                                 os.path.abspath(__file__), "--worker", "--trainer", trainer, "--precision", precision,
                                 "--layout", layout, "--out", folder], stdout=out, stderr=err, env=env, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = f"none: stopped after {timeout} s"
    return name, rc, time.time() - t0


def result(work, name):
    import torch
    path = os.path.join(work, name, "losses.json")
    if not os.path.exists(path) or not os.path.exists(os.path.join(work, name, "grads.pt")):
        err = os.path.join(work, name, "stderr.log")
        tail = []
        if os.path.exists(err):
            with open(err) as f:
                tail = f.read().strip().splitlines()[-1:]
        return None, None, " ".join(tail)[:300] or "no result"
    return json.load(open(path)), torch.load(os.path.join(work, name, "grads.pt")), ""


def grad_difference(got, ref):
    """The largest difference over the largest reference value, worst tensor."""
    if sorted(got) != sorted(ref):
        return float("inf"), "names differ"
    worst = max(((got[k] - ref[k]).abs().max() / ref[k].abs().max().clamp(min=1e-30)).item() for k in ref)
    return worst, ""


def compare(work):
    rows = ["| precision | layout | ranks | loss at 1 | last loss at step | max relative loss difference | step-1 gradients: max difference | within tolerance |",
            "|---|---|---|---|---|---|---|---|"]
    ok = True
    fp32_grads, fp8_grads = result(work, "fp32.ref")[1], result(work, "fp8.ref")[1]
    fp8_rounding = grad_difference(fp8_grads, fp32_grads)[0] if fp32_grads and fp8_grads else 0.0
    for precision in ("fp32", "fp8"):
        ref_losses, ref_grads, err = result(work, f"{precision}.ref")
        good = ref_losses is not None and len(ref_losses) == STEPS and ref_losses[-1] < ref_losses[0]
        ok = ok and good
        rows.append(f"| {precision} | 1 process (reference) | 1 | {ref_losses[0]:.4f} | {ref_losses[-1]:.4f} at {len(ref_losses)} | | | "
                    f"{'yes' if good else 'NO'} |"
                    if ref_losses else f"| {precision} | 1 process (reference) | 1 | | | | | NO: {err} |")
        for p, layout in RUNS:
            if p != precision or layout == "ref":
                continue
            world = LAYOUTS[layout]["tp"] * LAYOUTS[layout]["dp"]
            losses, grads, err = result(work, f"{p}.{layout}")
            if losses is None or ref_losses is None:
                rows.append(f"| {p} | {layout} | {world} | | | | | NO: {err or 'no reference'} |")
                ok = False
                continue
            common = min(len(losses), len(ref_losses))
            rel = max(abs(g - r) / r for g, r in zip(losses[:common], ref_losses[:common]))
            gd, why = grad_difference(grads, ref_grads)
            bar = GRAD_TOLERANCE if LAYOUTS[layout]["dp"] == 1 or precision == "fp32" else max(GRAD_TOLERANCE, fp8_rounding)
            good = common == STEPS and rel <= TOLERANCE and gd <= bar
            ok = ok and good
            steps = "" if common == STEPS else f" (steps 1-{common} of {STEPS})"
            rows.append(f"| {p} | {layout} | {world} | {losses[0]:.4f} | {losses[-1]:.4f} at {len(losses)} | {rel:.2e}{steps} | "
                        f"{gd:.2e} (at most {bar:.2e}) {why} | {'yes' if good else 'NO'} |")
    fp32, _, _ = result(work, "fp32.ref")
    fp8, _, _ = result(work, "fp8.ref")
    gap = max(abs(a - b) / b for a, b in zip(fp8, fp32)) if fp32 and fp8 else float("nan")  # over the steps both ran
    return "\n".join(rows), ok, gap


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", nargs="?")
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--md")
    ap.add_argument("--timeout", type=int, default=600, help="seconds a layout may run")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--precision")
    ap.add_argument("--layout")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.worker:
        worker(a)
        return
    if not a.work:
        ap.error("WORK, the folder the runs write into, is required")
    trainer = os.path.abspath(a.trainer)
    with concurrent.futures.ThreadPoolExecutor(len(RUNS)) as pool:
        for f in concurrent.futures.as_completed([pool.submit(run, a.work, trainer, p, l, a.timeout) for p, l in RUNS]):
            name, rc, dt = f.result()
            print(f"{name}: exit {rc} in {dt:.0f} s", flush=True)
    table, ok, gap = compare(a.work)
    note = (f"tolerance: losses {TOLERANCE:.0e} relative at every step, step-1 gradients {GRAD_TOLERANCE:.0e} of each tensor's "
            f"largest value, against the single process of the same precision; fp8 against fp32, single process: {gap:.2e}")
    print(note)
    print(table)
    if a.md:
        with open(a.md, "w") as f:
            f.write(note + "\n\n" + table + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
