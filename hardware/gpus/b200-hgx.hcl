# Source: the B200 multi-GPU communication chapter, "8x B200 Best Practices /
# Hardware Configuration": 180 GB HBM3e and 7.8 TB/s per GPU, 1400 W per GPU
# (the chapter's figure; NVIDIA's HGX B200 material lists 1000 W).
# TFLOP/s: not in the chapter; the NVIDIA HGX B200 datasheet (36 PFLOP/s
# bf16, 72 fp8, 18 tf32 for 8 GPUs, with sparsity), halved for dense, per
# GPU. See docs/references.md.
gpu "b200-hgx" {
  model              = "B200 180GB"
  memory_gib         = 180
  compute_capability = "10.0"
  hbm_tbps           = 7.8
  tdp_watts          = 1400

  tflops {
    bf16 = 2250
    fp16 = 2250
    fp8  = 4500
    tf32 = 1125
  }
}
