"""The table of what scripts/device/speed.sh measured: each run's plan
(saved before it ran) beside its outcome, the transformers baseline, and
the loss curves of runs that differ only in precision.

  python3 speed_summary.py WORK --md summary.md
"""

import argparse
import glob
import json
import os

PEAK_BF16 = 989e12


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def unwrap(v):
    return v["value"] if isinstance(v, dict) and "value" in v and "type" in v else v


def outputs(run_dir):
    for path in glob.glob(os.path.join(run_dir, ".gpuflow", "state", "*.json")):
        st = load(path) or {}
        stage = (st.get("stages") or {}).get("pretrain.speed")
        if stage:
            return {k: unwrap(v) for k, v in (stage.get("outputs") or {}).items()}, stage.get("status"), stage.get("error", "")
    return {}, "not run", ""


def estimate(plan):
    for s in (plan or {}).get("stages", []):
        if s.get("estimate"):
            return s["estimate"]
    return {}


def losses(run_dir):
    runs = sorted(glob.glob(os.path.join(run_dir, ".gpuflow", "runs", "pretrain.speed", "*", "events.jsonl")))
    out = {}
    for line in open(runs[-1]) if runs else []:
        e = json.loads(line)
        if e.get("type") == "metric" and e.get("name") == "loss":
            out[e.get("step")] = e.get("value")
    return out


def pct(got, want):
    return f"{(want - got) / got:+.1%}" if got and want else "n/a"


def gib(b):
    return f"{b / 2**30:.2f}" if b else "n/a"


def smooth(curve, steps, k=10):
    return [sum(curve[t] for t in steps[i - k + 1:i + 1]) / k for i in range(k - 1, len(steps))]


def compare(a, b, skip):
    """Max and mean relative difference of b from a after step skip, per
    step and over a 10-step moving mean."""
    steps = [s for s in sorted(a) if s in b and s > skip]
    if len(steps) < 10:
        return None
    per = [abs(b[s] - a[s]) / a[s] for s in steps]
    sa, sb = smooth(a, steps), smooth(b, steps)
    mov = [abs(y - x) / x for x, y in zip(sa, sb)]
    return max(per), sum(per) / len(per), max(mov), a[steps[-1]], b[steps[-1]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("--md", required=True)
    a = ap.parse_args()
    rows = ["| run | what | tokens/s | MFU (bf16 peak) | planned tokens/s (error) | peak GiB (allocated) | planned GiB (error) | final loss |",
            "|---|---|---|---|---|---|---|---|"]
    curves = {}
    for d in sorted(glob.glob(os.path.join(a.work, "*"))):
        name = os.path.basename(d)
        hf = load(os.path.join(d, "result.json"))
        if hf:
            rows.append(f"| {name} | transformers {hf.get('what')} | {hf['tokens_per_s']:,.0f} | {hf['mfu']:.1%} | | ({gib(hf.get('peak_allocated_bytes'))}) | | {hf.get('loss', 0):.4f} |")
            continue
        if not os.path.exists(os.path.join(d, "plan.json")):
            continue
        what = open(os.path.join(d, "what.txt")).read().strip() if os.path.exists(os.path.join(d, "what.txt")) else ""
        e = estimate(load(os.path.join(d, "plan.json")))
        o, status, err = outputs(d)
        tps, peak = o.get("tokens_per_s"), o.get("peak_memory_bytes")
        if status != "succeeded" or not tps:
            rows.append(f"| {name} | {what} | {status}: {str(err)[:120]} | | {e.get('tokens_per_s', 0):,.0f} | | {gib(e.get('memory_bytes', {}).get('total'))} | |")
            continue
        cfgs = glob.glob(os.path.join(d, ".gpuflow", "runs", "pretrain.speed", "*", "config.json"))
        peak_flops = (load(cfgs[-1]) or {}).get("peak_flops") if cfgs else None
        mfu_bf16 = (o.get("mfu") or 0) * (peak_flops or PEAK_BF16) / PEAK_BF16
        rows.append(f"| {name} | {what} | {tps:,.0f} | {mfu_bf16:.1%} | {e.get('tokens_per_s', 0):,.0f} ({pct(tps, e.get('tokens_per_s'))}) | "
                    f"{gib(peak)} ({gib(o.get('peak_allocated_bytes'))}) | {gib(e.get('memory_bytes', {}).get('total'))} "
                    f"({pct(peak, e.get('memory_bytes', {}).get('total'))}) | {o.get('final_loss', 0):.4f} |")
        curves[name] = losses(d)
    rows.append("")
    for name, c in curves.items():
        if name.endswith("-fp8") and name[:-4] + "-bf16" in curves:
            base = curves[name[:-4] + "-bf16"]
            r = compare(base, c, skip=20)
            if r:
                rows.append(f"{name} against {name[:-4]}-bf16 after step 20: per step max {r[0]:.2%}, mean {r[1]:.2%}; "
                            f"10-step mean max {r[2]:.2%}; last {r[3]:.4f} vs {r[4]:.4f}")
                marks = [s for s in (1, 10, 20, 50, 100, 150, 200) if s in base and s in c]
                rows.append("  " + ", ".join(f"step {s}: {base[s]:.3f}/{c[s]:.3f}" for s in marks))
    with open(a.md, "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
