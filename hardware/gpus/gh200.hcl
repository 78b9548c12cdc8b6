# Source: NVIDIA GH200 Grace Hopper Superchip datasheet: the Hopper GPU
# with 96 GB HBM3 at 4 TB/s (the HBM3e part has 144 GB at 4.9 TB/s: set
# memory_gib and hbm_tbps), dense peaks of 989 TFLOP/s bf16 and fp16,
# 1,979 fp8 and 494 tf32; the module is configurable from 450 W to
# 1,000 W, Grace CPU and memory included (the upper end taken). See
# docs/references.md.
gpu "gh200" {
  model              = "GH200 96GB"
  memory_gib         = 96
  compute_capability = "9.0"
  hbm_tbps           = 4
  tdp_watts          = 1000

  tflops {
    bf16 = 989
    fp16 = 989
    fp8  = 1979
    tf32 = 494
  }
}
