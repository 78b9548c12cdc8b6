# Source: NVIDIA H100 Tensor Core GPU datasheet, SXM form factor: 80 GB
# HBM3 at 3.35 TB/s, up to 700 W; dense (no sparsity) peaks of 989 TFLOP/s
# bf16 and fp16, 1979 fp8 and 494 tf32. See docs/references.md.
gpu "h100-sxm" {
  model              = "H100 80GB SXM"
  memory_gib         = 80
  compute_capability = "9.0"
  hbm_tbps           = 3.35
  tdp_watts          = 700

  tflops {
    bf16 = 989
    fp16 = 989
    fp8  = 1979
    tf32 = 494
  }
}
