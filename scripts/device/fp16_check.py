"""fp16 with dynamic loss scaling against bf16 on one GPU: the trainer
trains the same model, seed and data for STEPS steps in each precision,
one after the other, and prints their losses side by side with fp16's
loss scale and skipped steps. The check holds when every step after the
warm-up is within STEP_TOLERANCE of bf16's loss and the mean of the last
20 within END_TOLERANCE (a step fp16 skipped because its loss overflowed
has no loss and is left out).

  python3 fp16_check.py WORK --trainer DIR [--md OUT.md]
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from train_correctness import events, launch, markov_tokens, stop_runs_on_sigterm, write_shard  # noqa: E402

STEPS = 200
WARMUP = 20
STEP_TOLERANCE = 0.05
END_TOLERANCE = 0.02

MODEL = {"layers": 12, "hidden": 768, "ffn_hidden": 2048, "heads": 12, "kv_heads": 4, "vocab": 8192, "seq_len": 512,
         "tied_embeddings": False, "activation": "swiglu", "architecture": "LlamaForCausalLM", "rope_theta": 500000.0,
         "norm_eps": 1e-5}
LAYOUT = {"tp": 1, "pp": 1, "dp": 1, "cp": 1, "vp": 1, "zero": 0, "fsdp": False, "micro_batch": 8, "global_batch": 32,
          "recompute": "none", "sequence_parallel": False}


def run(work, trainer, precision):
    folder = os.path.join(work, precision)
    os.makedirs(folder, exist_ok=True)
    cfg = {"stage": f"pretrain.{precision}", "type": "pretrain", "model": MODEL, "layout": dict(LAYOUT, precision=precision),
           "data": [os.path.join(work, "markov")], "steps": STEPS, "lr": 6e-4, "min_lr": 6e-5, "schedule": "cosine",
           "warmup_steps": WARMUP, "weight_decay": 0.1, "seed": 1, "checkpoint_every": 0, "checkpoint": False,
           "checkpoint_dir": os.path.join(folder, "ckpt"), "keep_checkpoints": 1, "compile": False, "peak_flops": 989e12,
           "device": "cuda"}
    path = os.path.join(folder, "config.json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    rc = launch([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", "--nproc-per-node=1",
                 os.path.join(trainer, "train.py"), "--config", path], folder)
    if rc != 0:
        print(f"{precision}: exit {rc}")
    steps, result = {}, None
    for e in events(os.path.join(folder, "stdout.log")):
        if e["event"] == "step":
            steps[e["step"]] = e
        elif e["event"] == "result":
            result = e["result"]
        elif e["event"] == "error":
            print(f"{precision}: {e['summary']}: {e['detail']}")
    return steps, result


def table(bf16, fp16):
    rows = ["| step | bf16 loss | fp16 loss | relative difference | fp16 loss scale | fp16 steps skipped so far |",
            "|---|---|---|---|---|---|"]
    for s in [1, 2, 5, 10] + list(range(20, STEPS + 1, 20)):
        b, h = bf16[s]["loss"], fp16[s]["loss"]
        diff = f"{abs(h - b) / b:.2e}" if b is not None and h is not None else ""
        rows.append(f"| {s} | {b} | {h} | {diff} | {fp16[s]['loss_scale']:g} | {fp16[s]['skipped_steps']} |")
    return "\n".join(rows)


def verdict(bf16, fp16):
    after = [s for s in range(WARMUP + 1, STEPS + 1) if fp16[s]["loss"] is not None]
    worst = max(abs(fp16[s]["loss"] - bf16[s]["loss"]) / bf16[s]["loss"] for s in after)
    last = [s for s in range(STEPS - 19, STEPS + 1) if fp16[s]["loss"] is not None]
    mean = lambda run: sum(run[s]["loss"] for s in last) / len(last)  # noqa: E731
    end = abs(mean(fp16) - mean(bf16)) / mean(bf16)
    ok = worst <= STEP_TOLERANCE and end <= END_TOLERANCE
    return (f"after step {WARMUP}: largest relative difference {worst:.2e} (tolerance {STEP_TOLERANCE:g}); "
            f"last 20 steps' mean loss {mean(bf16):.4f} bf16, {mean(fp16):.4f} fp16, {end:.2e} apart (tolerance {END_TOLERANCE:g})"), ok


def main():
    stop_runs_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--md")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    write_shard(os.path.join(a.work, "markov"), markov_tokens(MODEL["vocab"], 2_000_000), MODEL["vocab"])
    (bf16, rb), (fp16, rf) = run(a.work, a.trainer, "bf16"), run(a.work, a.trainer, "fp16")
    if len(bf16) < STEPS or len(fp16) < STEPS or rb is None or rf is None:
        print(f"incomplete: {len(bf16)} bf16 steps, {len(fp16)} fp16 steps")
        sys.exit(1)
    text, ok = verdict(bf16, fp16)
    out = (table(bf16, fp16) + f"\n\n{text}; fp16 skipped {rf['skipped_steps']} steps, final loss scale {rf['loss_scale']:g}; "
           f"peak allocated {rb['peak_allocated_bytes'] / 2**30:.2f} GiB bf16, {rf['peak_allocated_bytes'] / 2**30:.2f} GiB fp16; "
           f"{'holds' if ok else 'DOES NOT HOLD'}")
    print(out)
    if a.md:
        with open(a.md, "w") as f:
            f.write(out + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
