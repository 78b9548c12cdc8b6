# Source: /work/.library/device/KINDS.md, kind nvidia-h100-x1: one "NVIDIA
# H100 80GB HBM3" with 81559 MiB seen by nvidia-smi (2026-11-13); a single
# GPU, so no NVLink peer and no network. Peaks: measured.md "Published
# references" (989 TFLOP/s bf16, 1979 fp8 dense) and the H100 SXM datasheet
# (fp16, tf32, 3.35 TB/s, 700 W). Seen there: 798 TFLOP/s on an 8192^3 bf16
# matmul and about 3.0 TB/s on a device copy.
# Cost: ASSUMPTION, not in the references: the H100 list price used for
# nebius-h100-8, USD per GPU-hour. Override cost_per_gpu_hour.
hardware "h100-x1" {
  description       = "Lent machine nvidia-h100-x1: one H100 80GB SXM"
  source            = "KINDS.md (nvidia-h100-x1); measured.md; NVIDIA H100 SXM datasheet"
  nodes             = 1
  cost_per_gpu_hour = 2.95

  gpu {
    model              = "H100 80GB SXM"
    count              = 1
    memory_gib         = 81559 / 1024 # MiB seen by nvidia-smi
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

  interconnect {
    kind        = "none"
    domain_size = 1
  }

  network {
    kind = "none"
  }
}
