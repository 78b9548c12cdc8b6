# Source: NVIDIA A100 Tensor Core GPU datasheet, SXM4 80GB: 80 GB HBM2e at
# 2,039 GB/s, 400 W; dense (no sparsity) peaks of 312 TFLOP/s bf16 and
# fp16 and 156 tf32; no fp8. See docs/references.md.
gpu "a100-sxm4-80gb" {
  model              = "A100 80GB SXM4"
  memory_gib         = 80
  compute_capability = "8.0"
  hbm_tbps           = 2.039
  tdp_watts          = 400

  tflops {
    bf16 = 312
    fp16 = 312
    tf32 = 156
  }
}
