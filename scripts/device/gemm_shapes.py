"""Rectangular GEMM sweep in PyTorch: the shapes a transformer layer's
linear layers take after tensor-parallel splitting (tokens x out x in),
timed with CUDA events. Prints one JSON line per shape and writes them
all to the file given as the first argument."""
import json
import sys

import torch

MS = [2048, 4096, 8192, 16384]
NK = [256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
DTYPES = {"bf16": torch.bfloat16}


def time_gemm(m, n, k, dtype):
    a = torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand(n, k, device="cuda", dtype=dtype) * 2 - 1
    flop = 2.0 * m * n * k
    iters = max(5, min(200, int(2e12 / flop)))
    for _ in range(3):
        torch.matmul(a, b.t())
    best = None
    for _ in range(3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            torch.matmul(a, b.t())
        end.record()
        end.synchronize()
        t = start.elapsed_time(end) / 1e3 / iters
        best = t if best is None else min(best, t)
    return best, flop / best / 1e12


def main():
    rows = []
    for name, dtype in DTYPES.items():
        for m in MS:
            for n in NK:
                for k in NK:
                    if m * n * k > 16384 * 16384 * 8192:
                        continue
                    s, tflops = time_gemm(m, n, k, dtype)
                    row = {"dtype": name, "m": m, "n": n, "k": k, "time_s": s, "tflops": round(tflops, 1)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f)


if __name__ == "__main__":
    main()
