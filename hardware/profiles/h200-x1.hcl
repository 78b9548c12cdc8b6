# Source: /work/.library/device/KINDS.md, kind nvidia-h200: one NVIDIA H200
# with 143771 MiB seen by nvidia-smi; a single GPU, so no NVLink peer and no
# network. Peaks: measured.md "Published references" (989 TFLOP/s bf16, 1979
# fp8 dense) and the H200 SXM datasheet (fp16, tf32, 4.8 TB/s, 700 W). Seen
# there: 769-798 TFLOP/s on an 8192^3 bf16 matmul, about 4.3 TB/s on a device
# copy.
# Cost: ASSUMPTION, not in the references: the H200 list price used for
# hgx-h200-8, USD per GPU-hour. Override cost_per_gpu_hour.
hardware "h200-x1" {
  description       = "Lent machine nvidia-h200: one H200 141GB SXM"
  source            = "KINDS.md (nvidia-h200); measured.md; NVIDIA H200 SXM datasheet"
  nodes             = 1
  cost_per_gpu_hour = 3.5

  gpu {
    model              = "H200 141GB SXM"
    count              = 1
    memory_gib         = 143771 / 1024 # MiB seen by nvidia-smi
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

  interconnect {
    kind        = "none"
    domain_size = 1
  }

  network {
    kind = "none"
  }
}
