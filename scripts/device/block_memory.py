"""What one block of gpuflow's trainer keeps from its forward for its
backward, bf16 against fp8, compiled as the trainer compiles it and eager:
a stack of blocks runs its forward, and each block's increment of
allocated memory is what it keeps (its output, the next block's input,
counted with it). Prints one line per case, bytes per layer; with
--saved, the tensors one compiled block saves, by shape and type.

  python3 block_memory.py TRAINER_DIR [--saved] [--cases SHAPE:MICRO:PRECISION:compiled|eager,...]
"""
import argparse
import sys

import torch

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")  # before argparse: the trainer's modules
import fp8  # noqa: E402  (the trainer's, from TRAINER_DIR)
import model as M  # noqa: E402

SHAPES = {"1B": dict(hidden=2048, ffn_hidden=8192, heads=32, kv_heads=8),
          "8B-wide": dict(hidden=4096, ffn_hidden=14336, heads=32, kv_heads=8)}
LAYERS = 4


def make_blocks(shape, precision, compiled, layers, seq):
    a = M.ModelArgs(layers=layers, vocab=128256, seq_len=seq, **SHAPES[shape])
    blocks = []
    for _ in range(layers):
        b = M.Block(a)
        if precision == "fp8":
            fp8.convert(b)
        b = b.cuda().to(torch.bfloat16)
        if compiled:
            b.forward = torch.compile(b.forward)
        blocks.append(b)
    return a, blocks, M.rope_table(a, "cuda")


def kept_per_layer(shape, micro, precision, compiled, seq=4096):
    a, blocks, rope = make_blocks(shape, precision, compiled, LAYERS, seq)
    x = torch.randn(micro, seq, a.hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def forward():
        marks, h = [], x
        for b in blocks:
            h = b(h, rope)
            torch.cuda.synchronize()
            marks.append(torch.cuda.memory_allocated())
        return h, marks

    h, _ = forward()  # compiles
    h.float().sum().backward()
    del h
    torch.cuda.synchronize()
    h, marks = forward()
    steps = [b - a for a, b in zip(marks, marks[1:])]
    del h
    return sum(steps) / len(steps)


def saved_tensors(shape, precision, seq=4096):
    """The tensors one compiled block saves for its backward, micro-batch
    1, each once (by storage), in units of tokens x hidden bytes."""
    a, (block,), rope = make_blocks(shape, precision, True, 1, seq)
    x = torch.randn(1, seq, a.hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    block(x, rope).float().sum().backward()  # compiles
    seen = {}

    def pack(t):
        if t.device.type == "cuda" and t.untyped_storage().data_ptr() not in seen:
            seen[t.untyped_storage().data_ptr()] = (tuple(t.shape), str(t.dtype).replace("torch.", ""), t.untyped_storage().nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = block(x, rope)
    del out
    sbh = seq * a.hidden
    print(f"{shape} {precision}, compiled, micro-batch 1: {len(seen)} saved storages, {sum(n for *_, n in seen.values()) / sbh:.2f} x tokens x hidden bytes")
    for shp, dtype, n in sorted(seen.values(), key=lambda v: -v[2]):
        print(f"  {str(shp):28s} {dtype:16s} {n / sbh:6.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trainer")
    ap.add_argument("--saved", action="store_true")
    ap.add_argument("--cases", default="1B:8:bf16:compiled,1B:8:fp8:compiled,1B:8:bf16:eager,1B:8:fp8:eager,"
                    "1B:4:bf16:compiled,1B:4:fp8:compiled,8B-wide:2:bf16:compiled,8B-wide:2:fp8:compiled")
    args = ap.parse_args()
    if args.saved:
        for shape in ("1B", "8B-wide"):
            for precision in ("bf16", "fp8"):
                saved_tensors(shape, precision)
                torch._dynamo.reset()
    print("| shape | micro-batch | precision | compiled | kept per layer (bytes) | per token x hidden |")
    print("|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        shape, micro, precision, how = case.split(":")
        micro, compiled = int(micro), how == "compiled"
        kept = kept_per_layer(shape, micro, precision, compiled)
        sbh = micro * 4096 * SHAPES[shape]["hidden"]
        print(f"| {shape} | {micro} | {precision} | {how} | {kept:,.0f} | {kept / sbh:.2f} |", flush=True)
        torch._dynamo.reset()
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
