"""Correctness of gpuflow's trainer across layouts: the same model, seed and
data trained for 50 steps on one GPU and under TP2 (with sequence
parallelism), PP2 (1F1B), PP2 with two chunks per rank (interleaved 1F1B)
and FSDP DP2 must give the same losses within bf16 tolerance.

  python3 train_correctness.py shard PREFIX --vocab 2048 --tokens 300000 [--random]
  python3 train_correctness.py run NAME WORK      # GPUs from CUDA_VISIBLE_DEVICES
  python3 train_correctness.py compare WORK --md OUT.md

shard writes a Megatron indexed dataset (MMIDIDX) of a learnable token
stream (each token mostly follows from the one before), or of uniform
random tokens with --random.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

TRAINER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugins", "train", "trainer", "train.py")
STEPS = 50
# bf16 training: the layouts reduce in different orders, so losses drift
# apart by rounding; 2% of the loss over 50 steps is bf16's tolerance here.
TOLERANCE = 0.02

MODEL = {"layers": 4, "hidden": 256, "ffn_hidden": 768, "heads": 8, "kv_heads": 4, "vocab": 2048, "seq_len": 256, "tied_embeddings": False,
         "activation": "swiglu", "architecture": "LlamaForCausalLM", "rope_theta": 500000.0, "norm_eps": 1e-5}
BASE_LAYOUT = {"tp": 1, "pp": 1, "dp": 1, "cp": 1, "vp": 1, "zero": 0, "fsdp": False, "micro_batch": 2, "global_batch": 8,
               "recompute": "none", "sequence_parallel": False, "precision": "bf16"}
LAYOUTS = {
    "ref": {},
    "tp2": {"tp": 2, "sequence_parallel": True},
    "pp2": {"pp": 2},
    "pp2vp2": {"pp": 2, "vp": 2},
    "dp2": {"dp": 2},
}


def write_shard(prefix, tokens, vocab):
    dtype, code = (np.uint16, 8) if vocab <= 65536 else (np.int32, 4)
    write_indexed(prefix, tokens, dtype, code)


def write_indexed(prefix, values, dtype, code):
    """values as one long document of a Megatron indexed dataset of dtype
    code `code` (8 uint16 tokens, 4 int32 tokens, 1 a uint8 loss mask)."""
    values.astype(dtype).tofile(prefix + ".bin")
    n = 1
    with open(prefix + ".idx", "wb") as f:
        f.write(b"MMIDIDX\x00\x00" + (1).to_bytes(8, "little") + bytes([code]) + n.to_bytes(8, "little") + (n + 1).to_bytes(8, "little"))
        f.write(np.array([len(values)], np.int32).tobytes())
        f.write(np.array([0], np.int64).tobytes())
        f.write(np.arange(n + 1, dtype=np.int64).tobytes())


def last_line(path):
    """The last line of a log, or "" where there is none."""
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        lines = f.read().strip().splitlines()
    return lines[-1] if lines else ""


def launch(argv, folder, env=None, timeout=600):
    """Runs argv with its output in folder's stdout.log and stderr.log; its
    exit code, or a note that it was stopped, so that one run cut by the
    timeout leaves the others' table whole."""
    with open(os.path.join(folder, "stdout.log"), "w") as out, open(os.path.join(folder, "stderr.log"), "w") as err:
        try:
            return subprocess.run(argv, stdout=out, stderr=err, env=env, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return f"none: stopped after {timeout} s"


def markov_tokens(vocab, n):
    """A learnable stream of n token ids (seed 0): each token follows from
    the one before by a fixed random map, but for 20% drawn afresh."""
    rng = np.random.default_rng(0)
    follow = rng.integers(0, vocab, vocab)
    noise = rng.random(n) < 0.2
    fresh = rng.integers(0, vocab, n)
    tokens = np.empty(n, np.int64)
    tokens[0] = fresh[0]
    for i in range(1, n):
        tokens[i] = fresh[i] if noise[i] else follow[tokens[i - 1]]
    return tokens


def shard(a):
    if a.random:
        tokens = np.random.default_rng(0).integers(0, a.vocab, a.tokens)
    else:
        tokens = markov_tokens(a.vocab, a.tokens)
    os.makedirs(os.path.dirname(os.path.abspath(a.prefix)), exist_ok=True)
    write_shard(a.prefix, tokens, a.vocab)


def config(name, work):
    layout = dict(BASE_LAYOUT, **LAYOUTS[name])
    return {"stage": f"pretrain.{name}", "type": "pretrain", "model": MODEL, "layout": layout, "data": [os.path.join(work, "markov")],
            "steps": STEPS, "lr": 1e-3, "min_lr": 1e-4, "schedule": "cosine", "warmup_steps": 5, "weight_decay": 0.1, "seed": 1,
            "checkpoint_every": 0, "checkpoint": False, "checkpoint_dir": os.path.join(work, name, "ckpt"), "keep_checkpoints": 1,
            "compile": False, "peak_flops": 989e12, "device": "cuda"}


def run(a):
    cfg = config(a.name, a.work)
    folder = os.path.join(a.work, a.name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "config.json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    l = cfg["layout"]
    world = l["tp"] * l["pp"] * l["dp"]
    rc = launch([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", f"--nproc-per-node={world}",
                 TRAINER, "--config", path], folder, timeout=a.timeout)
    print(f"{a.name}: exit {rc}")
    return rc


def losses(work, name):
    path = os.path.join(work, name, "stdout.log")
    if not os.path.exists(path):
        return {}, f"{name} did not run"
    out, err = {}, ""
    for line in open(path):
        if line.startswith("{"):
            e = json.loads(line)
            if e["event"] == "step":
                out[e["step"]] = e["loss"]
            elif e["event"] == "error":
                err = f"{e['summary']}: {e['detail']}"
    return out, err


def compare(a):
    ref, err = losses(a.work, "ref")
    rows = ["| layout | steps | loss at 1 | loss at 50 | max relative difference | mean absolute difference | within 2% |", "|---|---|---|---|---|---|---|"]
    ok = len(ref) == STEPS and ref[STEPS] < ref[1]
    rows.append(f"| 1 GPU (reference) | {len(ref)} | {ref.get(1, float('nan')):.4f} | {ref.get(STEPS, float('nan')):.4f} | | | {'yes' if ok else 'NO ' + err} |")
    for name in [n for n in LAYOUTS if n != "ref"]:
        got, err = losses(a.work, name)
        common = sorted(set(got) & set(ref))
        if len(common) < STEPS:
            rows.append(f"| {name} | {len(got)} | | | | | NO: {err or 'incomplete'} |")
            ok = False
            continue
        rel = max(abs(got[s] - ref[s]) / ref[s] for s in common)
        mean = sum(abs(got[s] - ref[s]) for s in common) / len(common)
        good = rel <= TOLERANCE
        ok = ok and good
        rows.append(f"| {name} | {len(got)} | {got[1]:.4f} | {got[STEPS]:.4f} | {rel:.4%} | {mean:.5f} | {'yes' if good else 'NO'} |")
    table = "\n".join(rows)
    print(table)
    if a.md:
        with open(a.md, "w") as f:
            f.write(table + "\n")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shard")
    s.add_argument("prefix")
    s.add_argument("--vocab", type=int, default=2048)
    s.add_argument("--tokens", type=int, default=300000)
    s.add_argument("--random", action="store_true")
    r = sub.add_parser("run")
    r.add_argument("name", choices=sorted(LAYOUTS))
    r.add_argument("work")
    r.add_argument("--timeout", type=int, default=240)
    c = sub.add_parser("compare")
    c.add_argument("work")
    c.add_argument("--md")
    a = ap.parse_args()
    sys.exit({"shard": shard, "run": run, "compare": compare}[a.cmd](a))


if __name__ == "__main__":
    main()
