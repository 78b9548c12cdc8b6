"""The table of scripts/device/train-plan.sh: each run's plan (saved before
any run started) beside what it measured. Errors are the prediction's,
(predicted - measured) / measured; "peak" is PyTorch's peak reserved
memory plus what the process held outside PyTorch, the figure the plan's
memory_bytes.total predicts.

  python3 train_plan_summary.py WORK --md plan-check.md
"""

import argparse
import os

from train_summary import estimate, gib, load, outputs, pct


def rows(work):
    with open(os.path.join(work, "runs.tsv")) as f:
        for line in f:
            run_id, run_dir, address, title = line.rstrip("\n").split("\t")
            yield run_id, run_dir, address, title


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("--md")
    a = ap.parse_args()
    lines = ["| run | planned tokens/s | measured | error | planned peak GiB | measured (allocated) | error | status |",
             "|---|---|---|---|---|---|---|---|"]
    for run_id, run_dir, address, title in rows(a.work):
        est = estimate(load(os.path.join(run_dir, "plan.json")), address)
        out, status, err = outputs(run_dir, address)
        ptps, pmem = est.get("tokens_per_s"), (est.get("memory_bytes") or {}).get("total")
        tps, mem, alloc = out.get("tokens_per_s"), out.get("peak_memory_bytes"), out.get("peak_allocated_bytes")
        note = status if not err else f"{status}: {err[:160]}"
        lines.append(f"| {run_id} {title} | {ptps or 0:,.0f} | {tps or 0:,.0f} | {pct(ptps, tps)} | {gib(pmem, 2)} | "
                     f"{gib(mem, 2)} ({gib(alloc, 2)}) | {pct(pmem, mem)} | {note} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
