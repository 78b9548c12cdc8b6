"""Tables of what scripts/device/train-all.sh measured: each gpuflow run's
plan (saved before it ran) beside its outcome, the Hugging Face baseline,
data-parallel scaling, and the LoRA fine-tune's loss.

  python3 train_summary.py WORK --md summary.md
"""

import argparse
import glob
import json
import os


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def unwrap(v):
    return v["value"] if isinstance(v, dict) and "value" in v and "type" in v else v


def outputs(run_dir, address):
    for path in glob.glob(os.path.join(run_dir, ".gpuflow", "state", "*.json")):
        st = load(path) or {}
        stage = (st.get("stages") or {}).get(address)
        if stage:
            return {k: unwrap(v) for k, v in (stage.get("outputs") or {}).items()}, stage.get("status"), stage.get("error", "")
    return {}, "not run", ""


def estimate(plan, address):
    for s in (plan or {}).get("stages", []):
        if s.get("address") == address and s.get("estimate"):
            return s["estimate"]
    return {}


def losses(run_dir, address):
    """(step, loss) of the stage's last run, from its events."""
    runs = sorted(glob.glob(os.path.join(run_dir, ".gpuflow", "runs", address, "*", "events.jsonl")))
    if not runs:
        return []
    out = []
    for line in open(runs[-1]):
        e = json.loads(line)
        if e.get("type") == "metric" and e.get("name") == "loss":
            out.append((e.get("step"), e.get("value")))
    return out


def pct(got, want):
    return f"{(got - want) / want:+.1%}" if got and want else "n/a"


def gib(b, digits=1):
    return f"{b / 2**30:.{digits}f}" if b else "n/a"


RUNS = [
    ("1x H200, Llama-3.2-1B shape, 4x4096, FSDP2, compiled", "speed1", "pretrain.speed"),
    ("1x H200, the same without torch.compile", "eager1", "pretrain.speed"),
    ("4x H200, same per GPU, FSDP2 full sharding", "speed4", "pretrain.speed"),
    ("h200-lab pre-train (2x H200, 110M Llama, 64x1024)", "lab", "pretrain.small"),
    ("h200-lab LoRA fine-tune (2x H200, r16 q/k/v/o)", "lab", "finetune.small_lora"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("--md")
    a = ap.parse_args()
    lines = ["## Plan against measurement", "",
             "| run | predicted tokens/s | measured tokens/s | error | predicted peak GiB | measured peak GiB (allocated) | error | MFU | status |",
             "|---|---|---|---|---|---|---|---|---|"]
    measured = {}
    for title, run, address in RUNS:
        d = os.path.join(a.work, run)
        est = estimate(load(os.path.join(d, "plan.json")), address)
        out, status, err = outputs(d, address)
        measured[(run, address)] = out
        ptps, pmem = est.get("tokens_per_s"), (est.get("memory_bytes") or {}).get("total")
        tps, mem, alloc = out.get("tokens_per_s"), out.get("peak_memory_bytes"), out.get("peak_allocated_bytes")
        mfu = f"{out['mfu']:.1%}" if out.get("mfu") else "n/a"
        note = status if not err else f"{status}: {err[:160]}"
        lines.append(f"| {title} | {ptps or 0:,.0f} | {tps or 0:,.0f} | {pct(tps, ptps)} | {gib(pmem)} | {gib(mem)} ({gib(alloc)}) | {pct(mem, pmem)} | {mfu} | {note} |")
    hf = load(os.path.join(a.work, "hf.json")) or {}
    one = measured.get(("speed1", "pretrain.speed"), {})
    four = measured.get(("speed4", "pretrain.speed"), {})
    lines += ["", "## Against Hugging Face eager and across GPUs", "",
              "| figure | value |", "|---|---|",
              f"| HF eager 1x H200, 4x4096: tokens/s, MFU | {hf.get('tokens_per_s', 0):,.0f}, {hf.get('mfu', 0):.1%} |",
              f"| gpuflow trainer 1x H200, 4x4096: tokens/s, MFU | {one.get('tokens_per_s', 0):,.0f}, {one.get('mfu', 0):.1%} |"]
    if one.get("tokens_per_s") and four.get("tokens_per_s"):
        lines.append(f"| 4x H200 scaling (tokens/s over 4x one GPU's) | {four['tokens_per_s'] / (4 * one['tokens_per_s']):.3f} |")
    ft = losses(os.path.join(a.work, "lab"), "finetune.small_lora")
    pt = losses(os.path.join(a.work, "lab"), "pretrain.small")
    lines += ["", "## Loss", "", "| stage | first step | last step |", "|---|---|---|"]
    for name, l in (("pretrain.small", pt), ("finetune.small_lora", ft)):
        if l:
            lines.append(f"| {name} | {l[0][1]:.4f} (step {l[0][0]}) | {l[-1][1]:.4f} (step {l[-1][0]}) |")
    cal = sorted(glob.glob(os.path.join(a.work, "*", ".gpuflow", "calibration.json")))
    lines += ["", "Calibration files written: " + (", ".join(os.path.relpath(c, a.work) for c in cal) or "none")]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
