"""Where a profiled run's GPU time goes, from the trainer's timeline
(profile-rank0.trace.json.gz): kernel time per step by kind (matrix
products in bf16 and fp8, attention, optimizer, Inductor's fused kernels,
copies) and the
kernels that took the most.

  python3 trace_kernels.py TRACE STEPS
"""

import collections
import gzip
import json
import re
import sys

# cuBLAS names its Hopper kernels nvjet_sm90_<a><b>tst...: a and b are q
# (e4m3) or r (e5m2) for fp8 operands, absent for bf16.
FP8_GEMM = re.compile(r"nvjet_sm\d+_[qr]{2}tst")
KINDS = [("products", ("nvjet", "gemm", "cutlass", "sm90_xmma")), ("attention", ("sdpa", "flash", "fmha", "attention")),
         ("optimizer", ("multi_tensor_apply", "adam")), ("fused (triton)", ("triton",)),
         ("copies", ("copy", "cat", "memcpy", "memset", "elementwise_kernel", "chunk"))]


def kind(name):
    if FP8_GEMM.search(name):
        return "fp8 products"
    low = name.lower()
    for k, marks in KINDS:
        if any(m in low for m in marks):
            return k
    return "other"


def main():
    path, steps = sys.argv[1], int(sys.argv[2])
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    by_name, by_kind = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in e:
            by_name[e["name"][:90]] += e["dur"]
            by_kind[kind(e["name"])] += e["dur"]
    total = sum(by_kind.values())
    print(f"GPU kernel time {total / steps / 1e3:.1f} ms per step")
    for k, us in by_kind.most_common():
        print(f"  {k:16s} {us / steps / 1e3:8.2f} ms {us / total:6.1%}")
    for n, us in by_name.most_common(22):
        print(f"  {us / steps / 1e3:8.2f} ms  {n}")


if __name__ == "__main__":
    main()
