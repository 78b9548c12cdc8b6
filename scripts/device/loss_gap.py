"""How far runs' loss curves lie from a reference run's, from the event
logs speed.sh brings back (logs.tgz, unpacked): per step, and over 10-step
means, which smooth the step-to-step noise of a small batch, after a given
step. The reference against another run of itself (same code, same seed)
is the spread compiled training has between runs.

  python3 loss_gap.py WORK REF RUN... [--after 50]
"""
import argparse
import glob
import json
import os
import statistics


def curve(work, name):
    paths = glob.glob(os.path.join(work, name, ".gpuflow", "runs", "*", "*", "events.jsonl"))
    if not paths:
        raise SystemExit(f"{name}: no events.jsonl under {work}/{name}")
    losses = {}
    with open(paths[0]) as f:
        for line in f:
            e = json.loads(line)
            if e.get("name") == "loss" and "step" in e:
                losses[e["step"]] = e["value"]
    return losses


def mean10(c, s):
    return statistics.mean(c[t] for t in range(s - 9, s + 1))


def gap(ref, run, after):
    steps = [s for s in ref if s > after and s in run]
    per_step = [abs(run[s] / ref[s] - 1) for s in steps]
    smooth = [abs(mean10(run, s) / mean10(ref, s) - 1) for s in steps if s - 9 > after]
    return max(per_step), statistics.mean(per_step), max(smooth), statistics.mean(smooth)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("ref")
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--after", type=int, default=50)
    a = ap.parse_args()
    ref = curve(a.work, a.ref)
    print("| run | per-step gap, max / mean | 10-step means' gap, max / mean | loss at 100 / 150 / 200 |")
    print("|---|---|---|---|")
    for name in a.runs:
        c = curve(a.work, name)
        g = gap(ref, c, a.after)
        at = " / ".join(f"{c[s]:.3f}" for s in (100, 150, 200) if s in c)
        print(f"| {name} | {g[0]:.2%} / {g[1]:.2%} | {g[2]:.2%} / {g[3]:.2%} | {at} |")


if __name__ == "__main__":
    main()
