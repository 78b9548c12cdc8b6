# Source: NVIDIA H200 Tensor Core GPU datasheet, SXM form factor: 141 GB
# HBM3e at 4.8 TB/s, up to 700 W; the same dense peaks as the H100 SXM (989
# TFLOP/s bf16 and fp16, 1979 fp8, 494 tf32). See docs/references.md.
gpu "h200-sxm" {
  model              = "H200 141GB SXM"
  memory_gib         = 141
  compute_capability = "9.0"
  hbm_tbps           = 4.8
  tdp_watts          = 700

  tflops {
    bf16 = 989
    fp16 = 989
    fp8  = 1979
    tf32 = 494
  }
}
