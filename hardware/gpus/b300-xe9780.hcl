# Source: "NVIDIA B300 Part 2: Dell XE9780 System Configuration", "B300 GPU
# Specifications": 192 GB HBM3e, 8 TB/s, 700 W, 2.25 PFLOP/s fp8 and 1.125
# bf16/fp16. These are the guide's claims, in part vendor projections, not
# measurements. NVIDIA's own B300 material differs: 288 GB HBM3e, a higher
# TDP, and dense bf16 about twice the guide's figure. Override gpu figures
# where your system reports otherwise.
# tf32: not in the guide; set to half of bf16, the ratio NVIDIA's datasheets
# give for every tensor-core generation since Ampere. See docs/references.md.
gpu "b300-xe9780" {
  model              = "B300 192GB"
  memory_gib         = 192
  compute_capability = "10.3"
  hbm_tbps           = 8
  tdp_watts          = 700

  tflops {
    bf16 = 1125
    fp16 = 1125
    fp8  = 2250
    tf32 = 562.5
  }
}
