"""The table of scripts/device/train-oos.sh: each run's plan (saved before
any run started) beside what it measured. Errors are the prediction's,
(predicted - measured) / measured.

  python3 train_oos_summary.py WORK --md oos.md
"""

import argparse
import os

from train_summary import estimate, gib, load, outputs, pct

RUNS = [
    ("oos1", "pretrain.speed", "1x H200, 1B shape, micro-batch 8, full recompute, compiled"),
    ("oos2", "pretrain.speed", "2x H200, 1B shape, FSDP, micro-batch 2, 2 per step, compiled"),
    ("oos3", "pretrain.small", "1x H200, h200-lab model, micro-batch 8, 4 per step, compiled"),
    ("oos4", "pretrain.speed", "2x H200, 1B shape, replicated (ZeRO 0), micro-batch 4, eager"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("--md")
    a = ap.parse_args()
    lines = ["| run | predicted tokens/s | measured | error | predicted peak GiB | measured (allocated) | error | status |",
             "|---|---|---|---|---|---|---|---|"]
    for run, address, title in RUNS:
        d = os.path.join(a.work, run)
        est = estimate(load(os.path.join(d, "plan.json")), address)
        out, status, err = outputs(d, address)
        ptps, pmem = est.get("tokens_per_s"), (est.get("memory_bytes") or {}).get("total")
        tps, mem, alloc = out.get("tokens_per_s"), out.get("peak_memory_bytes"), out.get("peak_allocated_bytes")
        note = status if not err else f"{status}: {err[:160]}"
        lines.append(f"| {title} | {ptps or 0:,.0f} | {tps or 0:,.0f} | {pct(ptps, tps)} | {gib(pmem)} | {gib(mem)} ({gib(alloc)}) | {pct(pmem, mem)} | {note} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
