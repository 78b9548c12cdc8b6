"""The evaluator's generation speed on one GPU: the Llama-3.2-1B shape in
bf16 (random weights), 32 prompts of 100-400 tokens, 64 new tokens
each (no stop token), decoded micro_batch at a time through
evaluate.Batch, as an eval stage's ranks decode them, after a warm-up.
Prints one line per micro-batch size: seconds of each run, new tokens a
second in the faster, and how many of each
completion's first tokens agree with micro-batch 1's (bf16 rounds a
batch's products otherwise than one row's, and a random model's nearly
flat logits let that move the likeliest token; tests/test_evaluate.py
holds a batch to each row alone, token for token, in fp32).

  python3 generate_speed.py TRAINER_DIR
"""
import sys
import time
import types

import numpy as np
import torch

sys.path.insert(0, sys.argv[1])
import evaluate as E  # noqa: E402  (the trainer's, from TRAINER_DIR)
import model as M  # noqa: E402


SIZES, REPEATS = (1, 8, 32), 2


def main():
    a = M.ModelArgs(layers=16, hidden=2048, ffn_hidden=8192, heads=32, kv_heads=8, vocab=128256, seq_len=4096, tied_embeddings=True)
    with torch.device("cuda"):
        m = M.Transformer(a)
    M.init_full(m, 1, "cuda")
    m = m.to(torch.bfloat16).eval()
    m.init_buffers(torch.device("cuda"))
    rng = np.random.default_rng(0)
    prompts = [rng.integers(0, a.vocab, size=int(n)).tolist() for n in rng.integers(100, 400, size=32)]
    g = types.SimpleNamespace(max_new_tokens=64, temperature=0.0, top_p=1.0, stop=[])
    first = None

    def run(size):
        rows = [E.Completion(p, g, a, i) for i, p in enumerate(prompts)]
        torch.cuda.synchronize()
        t = time.perf_counter()
        with torch.no_grad():
            for k in range(0, len(rows), size):
                b = E.Batch(rows[k:k + size], a, torch.device("cuda"))
                while b.going:
                    b.step(m)
        torch.cuda.synchronize()
        return time.perf_counter() - t, [c.out for c in rows]

    run(32)  # warm-up: the allocator and kernels' first launches
    print(f"| micro-batch | seconds, {REPEATS} runs | new tokens/s (the faster) | first tokens as micro-batch 1's, mean of {g.max_new_tokens} |")
    print("|---|---|---|---|")
    for size in SIZES:
        times = []
        for _ in range(REPEATS):
            dt, outs = run(size)
            times.append(dt)
        first = first or outs
        agree = np.mean([next((k for k, (x, y) in enumerate(zip(o, f)) if x != y), len(o)) for o, f in zip(outs, first)])
        print(f"| {size} | {', '.join(f'{t:.2f}' for t in times)} | {sum(map(len, outs)) / min(times):,.0f} | {agree:.1f} |", flush=True)


if __name__ == "__main__":
    main()
