# Source: NVIDIA A100 Tensor Core GPU datasheet, SXM4 40GB: 40 GB HBM2 at
# 1,555 GB/s, 400 W; dense (no sparsity) peaks of 312 TFLOP/s bf16 and
# fp16 and 156 tf32; no fp8. See docs/references.md.
gpu "a100-sxm4-40gb" {
  model              = "A100 40GB SXM4"
  memory_gib         = 40
  compute_capability = "8.0"
  hbm_tbps           = 1.555
  tdp_watts          = 400

  tflops {
    bf16 = 312
    fp16 = 312
    tf32 = 156
  }
}
