"""Correctness of gpuflow's trainer across layouts on GPUs: the same model,
seed and data trained for 50 steps on one GPU and under TP2 (with sequence
parallelism), PP2 (1F1B), PP2 with two chunks per rank (interleaved 1F1B)
and FSDP DP2 must give the same losses within bf16 tolerance. The gpus2
rows do the same for fp8 (with and without LoRA) under TP2 with sequence
parallelism, fp16 (loss scaling) under TP2, PP2 and DP2, tied embeddings
and LoRA under TP2 and PP2, each against its own model on one GPU.

  python3 train_correctness.py shard PREFIX --vocab 2048 --tokens 300000 [--random | --text DIR]
  python3 train_correctness.py run NAME WORK [--trainer DIR]   # GPUs from CUDA_VISIBLE_DEVICES
  python3 train_correctness.py list SET [--gpus N]             # a set's rows (of N GPUs)
  python3 train_correctness.py compare WORK [--set SET] --md OUT.md

shard writes a Megatron indexed dataset (MMIDIDX) of a learnable token
stream (each token mostly follows from the one before), or of uniform
random tokens with --random.
"""

import argparse
import contextlib
import json
import math
import os
import signal
import subprocess
import sys

import numpy as np

TRAINER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plugins", "train", "trainer")
STEPS = 50
# bf16 training: the layouts reduce in different orders, so losses drift
# apart by rounding; 2% of the loss over 50 steps is bf16's tolerance here
# (the layouts measured under 0.1% on H200s).
TOLERANCE = 0.02
# fp16 keeps 10 bits of mantissa to bf16's 7, so the same reorderings move
# its losses about 8 times less, and the loss scale (a power of two)
# changes no bit; its layouts are held to bf16's bar.
FP16_TOLERANCE = TOLERANCE
# fp8 (e4m3 forward, e5m2 gradients) with the same scales on every rank:
# the layouts' bf16 differences reach fp8's casts, and where one moves an
# element across an fp8 rounding boundary (e4m3's steps are 16 bf16 steps,
# so about one element in 16 of those that differ) the element moves a
# whole fp8 step. 1% more than bf16's bar for those.
FP8_TOLERANCE = 0.03

MODEL = {"layers": 4, "hidden": 256, "ffn_hidden": 768, "heads": 8, "kv_heads": 4, "vocab": 2048, "seq_len": 256, "tied_embeddings": False,
         "activation": "swiglu", "architecture": "LlamaForCausalLM", "rope_theta": 500000.0, "norm_eps": 1e-5}
BASE_LAYOUT = {"tp": 1, "pp": 1, "dp": 1, "cp": 1, "vp": 1, "zero": 0, "fsdp": False, "micro_batch": 2, "global_batch": 8,
               "recompute": "none", "sequence_parallel": False, "precision": "bf16"}
# LoRA fine-tunes the random base (all linear layers) at a larger rate.
LORA = {"rank": 8, "alpha": 16, "targets": ["all-linear"], "dropout": 0.0}
LORA_LR = 5e-3

# The models a row trains (precision, tied embeddings, LoRA), each with
# its tolerance and its words in the tables.
MODELS = {
    "bf16": {"words": "bf16", "tolerance": TOLERANCE},
    "fp8": {"precision": "fp8", "words": "fp8", "tolerance": FP8_TOLERANCE},
    "fp8-lora": {"precision": "fp8", "lora": True, "words": "LoRA over an fp8 base", "tolerance": FP8_TOLERANCE},
    "fp16": {"precision": "fp16", "words": "fp16 (loss scaling)", "tolerance": FP16_TOLERANCE},
    "tied": {"tied": True, "words": "bf16, tied embeddings", "tolerance": TOLERANCE},
    "lora": {"lora": True, "words": "LoRA (bf16)", "tolerance": TOLERANCE},
}
# The layouts, each a change of BASE_LAYOUT and its words.
LAYOUTS = {
    "ref": ({}, "1 GPU"),
    "tp2": ({"tp": 2, "sequence_parallel": True}, "TP2 with sequence parallelism"),
    "pp2": ({"pp": 2}, "PP2, 1F1B"),
    "pp2vp2": ({"pp": 2, "vp": 2}, "PP2 x VP2, interleaved 1F1B"),
    "dp2": ({"dp": 2}, "FSDP DP2"),
    "dp2-fsdp": ({"dp": 2, "fsdp": True}, "FSDP DP2, weights sharded (fsdp = true)"),
}
# Each set's rows, as model.layout (bf16's without the model, as they
# were first named); a row is held to its model's one-GPU run ("ref").
SETS = {
    "layouts": ["ref", "tp2", "pp2", "pp2vp2", "dp2"],
    "gpus2": ["fp8.ref", "fp8.tp2", "fp8-lora.ref", "fp8-lora.tp2", "fp16.ref", "fp16.tp2", "fp16.pp2", "fp16.dp2-fsdp",
              "tied.ref", "tied.tp2", "tied.pp2", "lora.ref", "lora.tp2", "lora.pp2"],
}


def split(name):
    """A row's model and layout."""
    model, _, layout = name.rpartition(".")
    return model or "bf16", layout


def reference(name):
    """The one-GPU run a row is held to."""
    model, _ = split(name)
    return "ref" if model == "bf16" else f"{model}.ref"


def gpus(name):
    l = dict(BASE_LAYOUT, **LAYOUTS[split(name)[1]][0])
    return l["tp"] * l["pp"] * l["dp"]


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


# The runs launch has started and not yet seen end, from every thread.
_running = set()


def _kill(p):
    """Stops a launched run's whole process group (torchrun and its ranks)."""
    if p.poll() is None:
        with contextlib.suppress(ProcessLookupError):  # ended meanwhile
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def _stop(signum, frame):
    for p in list(_running):
        _kill(p)
    sys.exit(128 + signum)


def stop_runs_on_sigterm():
    """Makes a caller's timeout (SIGTERM) stop every run this script
    launched, those its worker threads wait on included, and then the
    script: the runs sit in their own process groups, which the caller's
    signal does not reach. A script's main calls it."""
    signal.signal(signal.SIGTERM, _stop)


def launch(argv, folder, env=None, timeout=600):
    """Runs argv with its output in folder's stdout.log and stderr.log; its
    exit code, or a note that it was stopped, so that one run cut by the
    timeout leaves the others' table whole. argv runs in its own process
    group, stopped whole at the timeout: torchrun's ranks with it, so that
    none holds a GPU after."""
    with open(os.path.join(folder, "stdout.log"), "w") as out, open(os.path.join(folder, "stderr.log"), "w") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env, start_new_session=True)
        _running.add(p)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"none: stopped after {timeout} s"
        finally:
            _kill(p)
            _running.discard(p)


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


def text_tokens(folder, n):
    """The first n bytes of the Python sources under folder (sorted by
    path) as token ids below 256: text whose loss falls smoothly, unlike
    the Markov stream's sudden drop once its map is learnt."""
    out = bytearray()
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".py"):
                with open(os.path.join(root, f), "rb") as fh:
                    out += fh.read()
                if len(out) >= n:
                    return np.frombuffer(bytes(out[:n]), np.uint8).astype(np.int64)
    raise SystemExit(f"{folder} holds {len(out)} bytes of Python, fewer than {n}")


def shard(a):
    if a.text:
        tokens = text_tokens(a.text, a.tokens)
    elif a.random:
        tokens = np.random.default_rng(0).integers(0, a.vocab, a.tokens)
    else:
        tokens = markov_tokens(a.vocab, a.tokens)
    os.makedirs(os.path.dirname(os.path.abspath(a.prefix)), exist_ok=True)
    write_shard(a.prefix, tokens, a.vocab)


def config(name, work):
    model, layout = split(name)
    m = MODELS[model]
    lora = m.get("lora", False)
    cfg = {"stage": f"{'finetune' if lora else 'pretrain'}.{name}", "type": "finetune" if lora else "pretrain",
           "model": dict(MODEL, tied_embeddings=m.get("tied", False)),
           "layout": dict(BASE_LAYOUT, **LAYOUTS[layout][0], precision=m.get("precision", "bf16")),
           "data": [os.path.join(work, "markov")], "steps": STEPS, "lr": LORA_LR if lora else 1e-3, "min_lr": 1e-4,
           "schedule": "cosine", "warmup_steps": 5, "weight_decay": 0.1, "seed": 1, "checkpoint_every": 0, "checkpoint": False,
           "checkpoint_dir": os.path.join(work, name, "ckpt"), "keep_checkpoints": 1, "compile": False, "peak_flops": 989e12,
           "device": "cuda"}
    if lora:
        cfg["lora"] = LORA
    return cfg


def run(a):
    cfg = config(a.name, a.work)
    folder = os.path.join(a.work, a.name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "config.json")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    rc = launch([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", f"--nproc-per-node={gpus(a.name)}",
                 os.path.join(a.trainer, "train.py"), "--config", path], folder, os.environ, a.timeout)
    print(f"{a.name}: exit {rc}", flush=True)
    return 0 if rc == 0 else 1


def events(path):
    """The trainer's events in its stdout.log, in order."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def losses(work, name):
    """A run's step events by step (loss, and under fp16 the steps skipped
    for overflow so far), and what went wrong where it did not finish."""
    path = os.path.join(work, name, "stdout.log")
    if not os.path.exists(path):
        return {}, f"{name} did not run"
    out, err = {}, ""
    for e in events(path):
        if e["event"] == "step":
            out[e["step"]] = e
        elif e["event"] == "error":
            err = f"{e['summary']}: {e['detail']}"
    if not err and len(out) < STEPS:
        err = last_line(os.path.join(work, name, "stderr.log"))[:300] or "incomplete"
    return out, err


def counted(loss):
    """Whether a step's loss is a number (the trainer writes an overflowed
    one as null)."""
    return loss is not None and math.isfinite(loss)


def row(work, name, ref):
    """A row of the table against its reference's steps, and whether it
    holds: every step's loss within the model's tolerance, and the same
    steps skipped for overflow (none outside fp16)."""
    model, layout = split(name)
    words = f"{MODELS[model]['words']}, {LAYOUTS[layout][1]}"
    against = f"losses of {STEPS} steps against {MODELS[model]['words']} on 1 GPU"
    tolerance = MODELS[model]["tolerance"]
    got, err = losses(work, name)
    if len(got) < STEPS or len(ref) < STEPS:
        return f"| {words} | {against} | {len(got)} | | | | {tolerance:.0%} | NO: {err or 'reference incomplete'} |", False
    finite = [s for s in range(1, STEPS + 1) if counted(got[s]["loss"]) and counted(ref[s]["loss"])]
    apart = [s for s in range(1, STEPS + 1) if got[s].get("skipped_steps", 0) != ref[s].get("skipped_steps", 0)]
    rel = max((abs(got[s]["loss"] - ref[s]["loss"]) / ref[s]["loss"] for s in finite), default=math.inf)
    good = rel <= tolerance and not apart
    note = f" (skipped steps differ from step {apart[0]})" if apart else ""
    first, last = (got[s]["loss"] if counted(got[s]["loss"]) else float("nan") for s in (1, STEPS))
    return (f"| {words} | {against} | {len(got)} | {first:.4f} | {last:.4f} | {rel:.3%}{note} | {tolerance:.0%} | "
            f"{'yes' if good else 'NO'} |"), good


def compare(a):
    rows = ["| run | compares | steps | loss at 1 | loss at 50 | largest relative difference | tolerance | holds |",
            "|---|---|---|---|---|---|---|---|"]
    ok = True
    for name in chosen(a):
        if name == reference(name):
            ref, err = losses(a.work, name)
            model = MODELS[split(name)[0]]["words"]
            first, last = (ref[s]["loss"] if s in ref and counted(ref[s]["loss"]) else float("nan") for s in (1, STEPS))
            good = len(ref) == STEPS and last < first
            rows.append(f"| {model}, 1 GPU (reference) | its loss falls over {STEPS} steps | {len(ref)} | {first:.4f} | {last:.4f} | | | "
                        f"{'yes' if good else 'NO ' + err} |")
        else:
            line, good = row(a.work, name, losses(a.work, reference(name))[0])
            rows.append(line)
        ok = ok and good
    table = "\n".join(rows)
    print(table)
    if a.md:
        with open(a.md, "w") as f:
            f.write(table + "\n")
    return 0 if ok else 1


def chosen(a):
    """A set's rows, of the models --only names where it is given; a name
    no row has is refused, so that a typo does not check nothing."""
    only = set(filter(None, a.only.split(",")))
    models = {split(n)[0] for n in SETS[a.set]}
    unknown = only - models - {"eval"}  # gpus2-check.sh's name for the evaluation
    if unknown:
        sys.exit(f"--only {','.join(sorted(unknown))}: no such model in set {a.set}; it has {','.join(sorted(models))}")
    return [n for n in SETS[a.set] if not only or split(n)[0] in only]


def names(a):
    """A set's rows, one a line (of --gpus GPUs alone where given)."""
    for name in chosen(a):
        if not a.gpus or gpus(name) == a.gpus:
            print(name)
    return 0


def main():
    stop_runs_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shard")
    s.add_argument("prefix")
    s.add_argument("--vocab", type=int, default=2048)
    s.add_argument("--tokens", type=int, default=300000)
    s.add_argument("--random", action="store_true")
    s.add_argument("--text", default="", help="a folder: its Python sources' bytes as the tokens")
    r = sub.add_parser("run")
    r.add_argument("name", choices=sorted({n for rows in SETS.values() for n in rows}))
    r.add_argument("work")
    r.add_argument("--trainer", default=TRAINER, help="the trainer's folder (train.py)")
    r.add_argument("--timeout", type=int, default=240)
    n = sub.add_parser("list")
    n.add_argument("set", choices=sorted(SETS))
    n.add_argument("--gpus", type=int, default=0)
    n.add_argument("--only", default="", help="models, comma-separated (fp8,tied): their rows alone")
    c = sub.add_parser("compare")
    c.add_argument("work")
    c.add_argument("--set", choices=sorted(SETS), default="layouts")
    c.add_argument("--md")
    c.add_argument("--only", default="", help="models, comma-separated: their rows alone")
    a = ap.parse_args()
    sys.exit({"shard": shard, "run": run, "list": names, "compare": compare}[a.cmd](a))


if __name__ == "__main__":
    main()
