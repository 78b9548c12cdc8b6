#!/usr/bin/env python3
"""Where a profiled training step's GPU time goes, across ranks.

Reads the profile-rank<R>.trace.json.gz files that GPUFLOW_TRAIN_PROFILE
writes into a run folder (one per rank, timestamps on one clock because
the ranks share a machine) and prints, per rank:

- busy: the union of all kernels, of compute kernels and of NCCL kernels
  over the profiled window, their overlap, and the GPU's idle time;
- starved: the share of compute kernels that began within 20 us of the
  host's launch call returning, i.e. the GPU was waiting for the host;
- for each kind of collective (the i-th kernel of a kind on every rank is
  one collective), its mean kernel time, and that time split into waiting
  for the last rank to arrive and the transfer after it arrived.

    python3 scripts/device/trace_summary.py RUN_FOLDER
"""

import argparse
import gzip
import json
import os
import re
import statistics
import sys

STARVED_US = 20.0
COLLECTIVE = re.compile(r"ncclDevKernel_([A-Za-z]+)")


def load(path):
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    base = trace.get("baseTimeNanoseconds", 0) / 1e3  # ts are relative to it when present
    kernels, launches = [], {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        cat, args = e.get("cat", ""), e.get("args", {})
        if cat == "kernel":
            kernels.append((base + e["ts"], e.get("dur", 0.0), e["name"], args.get("correlation")))
        elif cat in ("cuda_runtime", "cuda_driver") and "Launch" in e.get("name", ""):
            launches[args.get("correlation")] = base + e["ts"] + e.get("dur", 0.0)
    kernels.sort()
    return kernels, launches


def union(intervals):
    total, end = 0.0, None
    start = None
    for s, e in sorted(intervals):
        if end is None or s > end:
            if end is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    if end is not None:
        total += end - start
    return total


def busy(kernels):
    spans = [(t, t + d) for t, d, _, _ in kernels]
    comm = [(t, t + d) for t, d, n, _ in kernels if n.startswith("ncclDevKernel")]
    comp = [(t, t + d) for t, d, n, _ in kernels if not n.startswith("ncclDevKernel")]
    window = max(e for _, e in spans) - min(s for s, _ in spans)
    all_, c, n = union(spans), union(comp), union(comm)
    return {"window": window, "busy": all_, "compute": c, "nccl": n, "overlap": c + n - all_, "idle": window - all_}


def starved(kernels, launches):
    lags = [t - launches[c] for t, _, n, c in kernels if not n.startswith("ncclDevKernel") and c in launches]
    if not lags:
        return float("nan"), float("nan")
    return sum(lag < STARVED_US for lag in lags) / len(lags), statistics.median(lags)


def collectives(ranks):
    """{kind: [(rank, kernel us, wait us, transfer us) means]}: the i-th
    kernel of a kind is the same collective on every rank."""
    by_kind = {}
    for r, (kernels, _) in ranks.items():
        for t, d, n, _ in kernels:
            m = COLLECTIVE.match(n)
            if m:
                by_kind.setdefault(m.group(1), {}).setdefault(r, []).append((t, d))
    out = {}
    for kind, per_rank in by_kind.items():
        count = min(len(v) for v in per_rank.values())
        if len(per_rank) != len(ranks) or count == 0:
            continue
        rows = []
        for r, calls in sorted(per_rank.items()):
            kern, wait, xfer = [], [], []
            for i in range(count):
                start, dur = calls[i]
                last = max(per_rank[q][i][0] for q in per_rank)
                kern.append(dur)
                wait.append(min(last - start, dur))
                xfer.append(max(start + dur - last, 0.0))
            rows.append((r, count, statistics.mean(kern), statistics.mean(wait), statistics.mean(xfer)))
        out[kind] = rows
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="a run folder holding profile-rank<R>.trace.json.gz")
    a = ap.parse_args()
    # os.walk, not glob: run folders live under .gpuflow, which glob skips.
    paths = sorted(os.path.join(d, f) for d, _, files in os.walk(a.folder) for f in files
                   if re.fullmatch(r"profile-rank\d+\.trace\.json\.gz", f))
    if not paths:
        sys.exit(f"trace_summary: no profile-rank*.trace.json.gz under {a.folder}; run the trainer with GPUFLOW_TRAIN_PROFILE=N")
    ranks = {int(re.search(r"rank(\d+)", p).group(1)): load(p) for p in paths}
    print("| rank | window ms | GPU busy ms | compute ms | NCCL ms | overlap ms | idle ms | compute kernels starved | median launch lag us |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r, (kernels, launches) in sorted(ranks.items()):
        b = busy(kernels)
        share, lag = starved(kernels, launches)
        print(f"| {r} | {b['window'] / 1e3:.1f} | {b['busy'] / 1e3:.1f} | {b['compute'] / 1e3:.1f} | {b['nccl'] / 1e3:.1f} | "
              f"{b['overlap'] / 1e3:.1f} | {b['idle'] / 1e3:.1f} | {share:.0%} | {lag:.0f} |")
    print()
    print("| collective | rank | calls | kernel us | waiting for the last rank us | transfer after it us |")
    print("|---|---|---|---|---|---|")
    for kind, rows in sorted(collectives(ranks).items()):
        for r, count, kern, wait, xfer in rows:
            print(f"| {kind} | {r} | {count} | {kern:.0f} | {wait:.0f} | {xfer:.0f} |")


if __name__ == "__main__":
    main()
