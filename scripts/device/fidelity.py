"""PyTorch's side of the benchmark plugin's fidelity check, and the comparison.

  python3 fidelity.py torch --checks gemm,hbm,p2p,nccl --json torch.json
  python3 fidelity.py compare --gpuflow gf_gemm.json gf_hbm.json ... --torch torch.json

`torch` measures what plugins/gpubench measures, the same way: the same
sizes, warm-up and timed counts, random data, every GPU at once for GEMM and
HBM, CUDA events around a batch (host clock after a barrier for
collectives), bytes and busbw counted as nccl-tests counts them. `compare`
prints one table of figure, gpuflow, PyTorch and their ratio (node median
over GPUs and pairs).
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

GEMM_DTYPES = ["bf16", "fp16", "tf32", "fp8"]
GEMM_SIZES = [8192, 16384]
GEMM_WARMUP, GEMM_WARMUP_S, GEMM_REST_S, GEMM_REPEATS, GEMM_ITERS = 5, 0.0, 0.5, 3, 50
HBM_BYTES, HBM_WARMUP, HBM_ITERS = 4 << 30, 3, 20
P2P_BYTES, P2P_WARMUP, P2P_ITERS = 1 << 30, 3, 10
NCCL_OPS = ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"]
# torch.distributed's all_reduce and broadcast work in place on one tensor;
# its all_gather_into_tensor, reduce_scatter_tensor and all_to_all_single
# write a separate output. gpubench runs both ways, and the comparison
# takes its figure of the same kind: NCCL's out-of-place all_reduce is
# about 4% slower at 16 MiB on 4x H200 whoever calls it.
TORCH_IN_PLACE = ("all_reduce", "broadcast")
NCCL_SIZES = [1 << 20, 16 << 20, 256 << 20, 1 << 30]
NCCL_WARMUP, NCCL_ITERS, NCCL_MIN_BATCH_S = 5, 20, 0.05


def bus_factor(op, n):
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    return 1.0


def gemm(torch):
    """TFLOP/s per GPU, all GPUs at once, events around the timed batch."""
    n = torch.cuda.device_count()
    torch.backends.cuda.matmul.allow_tf32 = True
    rows = []
    for dt in GEMM_DTYPES:
        for size in GEMM_SIZES:
            runs = []
            for g in range(n):
                dev = torch.device("cuda", g)
                uni = lambda: torch.rand(size, size, device=dev) * 2 - 1
                if dt == "fp8":
                    a = uni().to(torch.float8_e4m3fn)
                    b = uni().to(torch.float8_e4m3fn).t()  # column-major: TN
                    one = torch.ones((), device=dev)
                    fn = lambda a=a, b=b, one=one: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)
                else:
                    t = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32}[dt]
                    a, b = uni().to(t), uni().to(t)
                    out = torch.empty(size, size, device=dev, dtype=t)
                    fn = lambda a=a, b=b, out=out: torch.matmul(a, b, out=out)
                runs.append((g, fn))
            best = {}
            for _ in range(GEMM_REPEATS):
                for g, secs in timed_concurrently(torch, runs).items():
                    best[g] = min(best.get(g, secs), secs)
            for g, secs in best.items():
                rows.append({"dtype": dt, "m": size, "gpu": g, "tflops": 2 * size ** 3 / secs / 1e12})
            del runs
            torch.cuda.empty_cache()
    return rows


def timed_concurrently(torch, runs):
    """One timed run of every GPU's fn at once, as gpubench times a GEMM
    finalist: idle GEMM_REST_S, then at least GEMM_WARMUP products and
    GEMM_WARMUP_S seconds (waiting every 4 so the clock measures GPU time),
    then GEMM_ITERS between events. Returns seconds per product by GPU."""
    for g, _ in runs:
        torch.cuda.synchronize(g)
    time.sleep(GEMM_REST_S)
    t0, i = time.perf_counter(), 0
    while i < GEMM_WARMUP or time.perf_counter() - t0 < GEMM_WARMUP_S:
        for g, fn in runs:
            with torch.cuda.device(g):
                fn()
        if i % 4 == 3:
            for g, _ in runs:
                torch.cuda.synchronize(g)
        i += 1
    events = {}
    for g, _ in runs:
        with torch.cuda.device(g):
            events[g] = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            events[g][0].record()
    for _ in range(GEMM_ITERS):
        for g, fn in runs:
            with torch.cuda.device(g):
                fn()
    for g, _ in runs:
        with torch.cuda.device(g):
            events[g][1].record()
    out = {}
    for g, (s, e) in events.items():
        e.synchronize()
        out[g] = s.elapsed_time(e) / 1e3 / GEMM_ITERS
    return out


def timed(torch, fn, warmup, iters):
    for _ in range(warmup):
        fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / 1e3 / iters


def hbm(torch):
    """Copy of HBM_BYTES and triad over thirds of twice that, per GPU, all at once."""
    import threading

    n = torch.cuda.device_count()
    rows = [None] * n

    def one(g):
        with torch.cuda.device(g):
            words = HBM_BYTES // 4
            region = torch.empty(2 * words, device="cuda", dtype=torch.float32)
            x, y = region[:words], region[words:]
            x.uniform_(-1, 1)
            copy = timed(torch, lambda: y.copy_(x), HBM_WARMUP, HBM_ITERS)
            third = (2 * HBM_BYTES // 3 // 64 * 64) // 4
            a, b, c = region[:third], region[third:2 * third], region[2 * third:3 * third]
            b.uniform_(-1, 1)
            c.uniform_(-1, 1)
            triad = timed(torch, lambda: torch.add(b, c, alpha=3.0, out=a), HBM_WARMUP, HBM_ITERS)
            rows[g] = {"gpu": g, "copy_tbps": 2 * HBM_BYTES / copy / 1e12, "triad_tbps": 3 * third * 4 / triad / 1e12}
            del region

    threads = [threading.Thread(target=one, args=(g,)) for g in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.empty_cache()
    return rows


def p2p(torch):
    """tensor.copy_ across devices, one way per ordered pair, both ways per pair."""
    n = torch.cuda.device_count()
    if n < 2:
        return []
    words = P2P_BYTES // 4
    src = [torch.rand(words, device=f"cuda:{g}") for g in range(n)]
    dst = [torch.empty(words, device=f"cuda:{g}") for g in range(n)]

    def sync():
        for g in range(n):
            torch.cuda.synchronize(g)

    def host_timed(fn):
        for _ in range(P2P_WARMUP):
            fn()
        sync()
        t0 = time.perf_counter()
        for _ in range(P2P_ITERS):
            fn()
        sync()
        return (time.perf_counter() - t0) / P2P_ITERS

    rows = []
    for s in range(n):
        for d in range(n):
            if s == d:
                continue
            secs = host_timed(lambda: dst[d].copy_(src[s]))
            row = {"src": s, "dst": d, "one_way_gbps": P2P_BYTES / secs / 1e9}
            if s < d:
                ss, sd = torch.cuda.Stream(s), torch.cuda.Stream(d)

                def both():
                    with torch.cuda.stream(ss):
                        dst[d].copy_(src[s])
                    with torch.cuda.stream(sd):
                        dst[s].copy_(src[d])

                row["bidir_gbps"] = 2 * P2P_BYTES / host_timed(both) / 1e9
            rows.append(row)
    return rows


def nccl_worker(rank, world, port, q):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    rows = []
    for op in NCCL_OPS:
        for size in NCCL_SIZES:
            total = size // 2 // world * world  # bf16 elements, whole chunks
            if op in ("all_reduce", "broadcast"):
                total = size // 2
            if total < world:
                continue
            chunk = total // world
            if op == "all_reduce":
                t = torch.ones(total, dtype=torch.bfloat16, device="cuda")
                fn = lambda: dist.all_reduce(t)
            elif op == "broadcast":
                t = torch.ones(total, dtype=torch.bfloat16, device="cuda")
                fn = lambda: dist.broadcast(t, 0)
            elif op == "all_gather":
                i, o = torch.ones(chunk, dtype=torch.bfloat16, device="cuda"), torch.empty(total, dtype=torch.bfloat16, device="cuda")
                fn = lambda: dist.all_gather_into_tensor(o, i)
            elif op == "reduce_scatter":
                i, o = torch.ones(total, dtype=torch.bfloat16, device="cuda"), torch.empty(chunk, dtype=torch.bfloat16, device="cuda")
                fn = lambda: dist.reduce_scatter_tensor(o, i)
            else:
                i, o = torch.ones(total, dtype=torch.bfloat16, device="cuda"), torch.empty(total, dtype=torch.bfloat16, device="cuda")
                fn = lambda: dist.all_to_all_single(o, i)
            # As gpubench: a batch of at least NCCL_ITERS runs, more where the
            # warm-up says NCCL_ITERS would end before NCCL_MIN_BATCH_S.
            torch.cuda.synchronize()
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(NCCL_WARMUP):
                fn()
            torch.cuda.synchronize()
            per = (time.perf_counter() - t0) / NCCL_WARMUP
            iters = torch.tensor([max(NCCL_ITERS, math.ceil(NCCL_MIN_BATCH_S / per))], device="cuda")
            dist.all_reduce(iters, op=dist.ReduceOp.MAX)
            iters = min(int(iters.item()), 100000)
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            torch.cuda.synchronize()
            secs = torch.tensor([(time.perf_counter() - t0) / iters], device="cuda")
            dist.all_reduce(secs, op=dist.ReduceOp.MAX)
            nbytes = total * 2
            alg = nbytes / secs.item() / 1e9
            rows.append({"op": op, "bytes": nbytes, "iters": iters, "algbw_gbps": alg, "busbw_gbps": alg * bus_factor(op, world),
                         "in_place": op in TORCH_IN_PLACE})
    if rank == 0:
        q.put({"rows": rows, "nccl": ".".join(map(str, torch.cuda.nccl.version()))})
    dist.destroy_process_group()


def nccl(torch):
    import torch.multiprocessing as mp

    world = torch.cuda.device_count()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = 29500 + os.getpid() % 1000
    procs = [ctx.Process(target=nccl_worker, args=(r, world, port, q)) for r in range(world)]
    for p in procs:
        p.start()
    out = q.get(timeout=600)
    for p in procs:
        p.join()
    return out


def cmd_torch(args):
    import torch

    res = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpus": torch.cuda.device_count(),
           "name": torch.cuda.get_device_name(0)}
    for check in args.checks.split(","):
        t0 = time.time()
        if check == "nccl":
            out = nccl(torch)
            res["nccl"], res["nccl_version"] = out["rows"], out["nccl"]
        else:
            res[check] = {"gemm": gemm, "hbm": hbm, "p2p": p2p}[check](torch)
        print(f"torch {check}: {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
    with open(args.json, "w") as f:
        json.dump(res, f, indent=1)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def best_nccl(rows):
    """With several rounds (ROUNDS > 1), each side's best busbw per op and
    size: the same rule for both, so a slow round on either side does not
    decide the ratio."""
    best = {}
    for r in rows:
        key = (r["op"], r["bytes"], r.get("in_place", False))
        if key not in best or r["busbw_gbps"] > best[key]["busbw_gbps"]:
            best[key] = r
    return list(best.values())


def cmd_compare(args):
    gf = {}
    for path in args.gpuflow:
        with open(path) as f:
            r = json.load(f)
        for key in ("gemm", "hbm", "p2p", "gpus"):
            if r.get(key):
                gf[key] = r[key]
        gf.setdefault("nccl", []).extend(r.get("nccl") or [])
        for k, v in r.get("versions", {}).items():
            if v:
                gf.setdefault("versions", {})[k] = v
    gf["nccl"] = best_nccl(gf["nccl"])
    pt = {}
    for path in args.torch:
        with open(path) as f:
            r = json.load(f)
        nccl_rows = pt.get("nccl", []) + (r.get("nccl") or [])
        for k, v in r.items():
            pt.setdefault(k, v)
        pt["nccl"] = best_nccl(nccl_rows)
    lines = []

    def row(name, a, b, unit):
        ratio = a / b if b and b == b and a == a else float("nan")
        lines.append((name, a, b, ratio, unit))

    for dt in GEMM_DTYPES:
        for size in GEMM_SIZES:
            a = med([r["tflops"] for r in gf.get("gemm", []) if r["dtype"] == dt and r["m"] == size])
            b = med([r["tflops"] for r in pt.get("gemm", []) if r["dtype"] == dt and r["m"] == size])
            row(f"gemm {dt} {size}^3", a, b, "TFLOP/s")
    for key in ("copy_tbps", "triad_tbps"):
        row(f"hbm {key.split('_')[0]} 4 GiB", med([r[key] for r in gf.get("hbm", [])]), med([r[key] for r in pt.get("hbm", [])]), "TB/s")
    if pt.get("p2p"):
        row("p2p one-way 1 GiB", med([r["one_way_gbps"] for r in gf.get("p2p", [])]),
            med([r["one_way_gbps"] for r in pt["p2p"]]), "GB/s")
        row("p2p both ways 1 GiB", med([r["bidir_gbps"] for r in gf.get("p2p", []) if r.get("bidir_gbps")]),
            med([r["bidir_gbps"] for r in pt["p2p"] if "bidir_gbps" in r]), "GB/s")
    # With one rank NCCL copies or does nothing, PyTorch may skip the call:
    # there is nothing to compare.
    for r in pt.get("nccl", []) if pt.get("gpus", 1) > 1 else []:
        in_place = r.get("in_place", r["op"] in TORCH_IN_PLACE)  # older runs did not record it
        mine = [x["busbw_gbps"] for x in gf.get("nccl", []) if x["op"] == r["op"] and x["bytes"] == r["bytes"] and x["in_place"] == in_place]
        if mine:
            kind = "in place" if in_place else "out of place"
            row(f"nccl {r['op']} {r['bytes'] >> 20} MiB busbw ({kind})", mine[0], r["busbw_gbps"], "GB/s")
    v = gf.get("versions", {})
    name = gf.get("gpus", [{}])[0].get("name", "?")
    print(f"\nfidelity: {len(gf.get('gpus', []))}x {name}, driver {v.get('driver')}, CUDA {v.get('cuda')}, "
          f"cuBLASLt {v.get('cublaslt')}, NCCL {v.get('nccl')} (gpuflow) / {pt.get('nccl_version')} (torch {pt.get('torch')})")
    print(f"{'figure':34} {'gpuflow':>10} {'PyTorch':>10} {'ratio':>7}  unit")
    worst = None
    for name, a, b, ratio, unit in lines:
        print(f"{name:34} {a:10.2f} {b:10.2f} {ratio:7.3f}  {unit}")
        if ratio == ratio and (worst is None or ratio < worst[1]):
            worst = (name, ratio)
    if worst:
        print(f"lowest ratio: {worst[1]:.3f} ({worst[0]})")
    if args.md:
        with open(args.md, "w") as f:
            f.write("| figure | gpuflow | PyTorch | ratio | unit |\n|---|---|---|---|---|\n")
            for name, a, b, ratio, unit in lines:
                f.write(f"| {name} | {a:.2f} | {b:.2f} | {ratio:.3f} | {unit} |\n")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("torch")
    t.add_argument("--checks", default="gemm,hbm,p2p,nccl")
    t.add_argument("--json", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--gpuflow", nargs="+", required=True)
    c.add_argument("--torch", nargs="+", required=True)
    c.add_argument("--md")
    args = ap.parse_args()
    {"torch": cmd_torch, "compare": cmd_compare}[args.cmd](args)


if __name__ == "__main__":
    main()
