"""Runs the Go BPE benchmark binary and Hugging Face tokenizers on the same
vocabulary and text, and prints tokens/s side by side (see tokenizer-bench.sh).

Documents are the corpus's paragraphs, as in the Go benchmark. Hugging Face
encodes them with encode_batch, on one thread (TOKENIZERS_PARALLELISM=false)
and on all (RAYON_NUM_THREADS); Go runs BenchmarkEncode under GOMAXPROCS=1
and BenchmarkEncodeParallel under GOMAXPROCS=threads. Each Hugging Face mode
runs in its own process, since its thread pool is fixed at import.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time


def paragraphs(path):
    with open(path, encoding="utf-8") as f:
        return [p for p in f.read().split("\n\n") if p.strip()]


def hf_child(vocab, corpus, repeats):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(vocab)
    docs = paragraphs(corpus)
    tok.encode_batch(docs, add_special_tokens=False)  # warm up
    best = None
    for _ in range(repeats):
        start = time.perf_counter()
        encs = tok.encode_batch(docs, add_special_tokens=False)
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    tokens = sum(len(e.ids) for e in encs)
    print(json.dumps({"tokens": tokens, "seconds": best}))


def run_hf(args, threads):
    env = dict(os.environ)
    if threads == 1:
        env["TOKENIZERS_PARALLELISM"] = "false"
        env["RAYON_NUM_THREADS"] = "1"
    else:
        env["TOKENIZERS_PARALLELISM"] = "true"
        env["RAYON_NUM_THREADS"] = str(threads)
    out = subprocess.run(
        [sys.executable, __file__, "--hf-child", "--vocab", args.vocab, "--corpus", args.corpus,
         "--repeats", str(args.repeats)],
        env=env, check=True, capture_output=True, text=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return r["tokens"], r["tokens"] / r["seconds"]


BENCH_LINE = re.compile(r"^(Benchmark\S+)\s+\d+\s+.*?([\d.e+]+) tokens/op\s+([\d.e+]+) tokens/s")


def run_go(args, bench, threads):
    env = dict(os.environ, GOMAXPROCS=str(threads),
               GPUFLOW_TOKENIZER_VOCAB=args.vocab, GPUFLOW_TOKENIZER_CORPUS=args.corpus)
    out = subprocess.run(
        [args.go_test, "-test.run", "^$", "-test.bench", bench, "-test.benchtime", f"{args.repeats}x"],
        env=env, check=True, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        m = BENCH_LINE.match(line)
        if m:
            return int(float(m.group(2))), float(m.group(3))
    raise SystemExit("no benchmark line in Go output:\n" + out.stdout + out.stderr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--go-test")
    p.add_argument("--vocab", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--hf-child", action="store_true")
    args = p.parse_args()
    if args.hf_child:
        return hf_child(args.vocab, args.corpus, args.repeats)

    import tokenizers

    rows = []
    for threads in (1, args.threads):
        hf_tokens, hf_rate = run_hf(args, threads)
        bench = "^BenchmarkEncode$" if threads == 1 else "^BenchmarkEncodeParallel$"
        go_tokens, go_rate = run_go(args, bench, threads)
        rows.append((f"HF tokenizers {tokenizers.__version__}", threads, hf_tokens, hf_rate, 1.0))
        rows.append(("gpuflow bpe (Go)", threads, go_tokens, go_rate, go_rate / hf_rate))
        if go_tokens != hf_tokens:
            print(f"WARNING: token counts differ: Go {go_tokens}, HF {hf_tokens}")
    size = os.path.getsize(args.corpus)
    print(f"corpus {args.corpus}: {size} bytes, {len(paragraphs(args.corpus))} paragraphs; vocab {args.vocab}")
    print(f"{'implementation':<26} {'threads':>7} {'tokens':>9} {'tokens/s':>12} {'tokens/s/core':>14} {'vs HF':>6}")
    for name, threads, tokens, rate, ratio in rows:
        print(f"{name:<26} {threads:>7} {tokens:>9} {rate:>12.0f} {rate / threads:>14.0f} {ratio:>5.1f}x")


if __name__ == "__main__":
    main()
