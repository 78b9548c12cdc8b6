# Source: NVIDIA GB200 NVL72 datasheet, per GPU: 13.4 TB HBM3e and 576 TB/s
# per rack of 72 (186 GB, 8 TB/s each); 360 PFLOP/s bf16, 720 fp8 and 180
# tf32 per rack with sparsity, halved for dense; 1200 W per GPU.
# See docs/references.md.
gpu "b200-gb200" {
  model              = "B200 (GB200 superchip)"
  memory_gib         = 186
  compute_capability = "10.0"
  hbm_tbps           = 8
  tdp_watts          = 1200

  tflops {
    bf16 = 2500
    fp16 = 2500
    fp8  = 5000
    tf32 = 1250
  }
}
