"""Variants of the trainer's fp8.py, to train beside it and weigh what
each choice does to the loss and the speed:

  e4m3g    gradients cast to e4m3 as well (fp8.py: e5m2)
  fast     the forward product accumulated in the tensor cores' fast mode
  bwdbf16  the forward's products in fp8, the backward's in bf16 from the
           bf16 input and weight (where fp8's effect on the loss arises)

  python3 fp8_variants.py TRAINER_DIR OUT_DIR   (writes OUT_DIR/NAME.py)

fp8_variant.sh, as GPUFLOW_PYTHON, puts one in a run's place.
"""
import os
import sys

FORWARD = "out = torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=x.dtype)"
SAVED = """        ctx.save_for_backward(xq, xs, wq, ws)
        ctx.x_shape = x.shape
        return out.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_out):
        xq, xs, wq, ws = ctx.saved_tensors
        g = grad_out.reshape(-1, grad_out.shape[-1])"""
BF16_BACKWARD = """        ctx.save_for_backward(x2, weight)
        ctx.x_shape = x.shape
        return out.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_out):
        x2, weight = ctx.saved_tensors
        g = grad_out.reshape(-1, grad_out.shape[-1])
        return (g @ weight.to(g.dtype)).reshape(ctx.x_shape), g.t() @ x2.to(g.dtype)"""
VARIANTS = {
    "e4m3g": ("E5M2 = torch.float8_e5m2", "E5M2 = torch.float8_e4m3fn"),
    "fast": (FORWARD, FORWARD[:-1] + ", use_fast_accum=True)"),
    "bwdbf16": (SAVED, BF16_BACKWARD),
}


def main():
    trainer, out = sys.argv[1], sys.argv[2]
    with open(os.path.join(trainer, "fp8.py")) as f:
        src = f.read()
    os.makedirs(out, exist_ok=True)
    for name, (old, new) in VARIANTS.items():
        if src.count(old) != 1:
            raise SystemExit(f"{name}: fp8.py no longer holds the code this variant replaces")
        with open(os.path.join(out, name + ".py"), "w") as f:
            f.write(src.replace(old, new))


if __name__ == "__main__":
    main()
