# Source: /work/.library/device/KINDS.md, kind nvidia-h200-x2: 2 NVIDIA H200
# of 143771 MiB on one host, nothing outside reachable, so no network. How
# the two are linked is not recorded there; NVLink 4 through NVSwitch is
# ASSUMED from the same hosts' 4-GPU kind (measured.md: all pairs NV18).
# Peaks: H200 SXM datasheet, as measured.md quotes (989 TFLOP/s bf16, 1979
# fp8 dense; 4.8 TB/s; NVLink 900 GB/s bidirectional).
# Cost: ASSUMPTION, not in the references: the H200 list price used for
# hgx-h200-8, USD per GPU-hour. Override cost_per_gpu_hour.
hardware "h200-x2" {
  description       = "Lent machine nvidia-h200-x2: 2x H200 141GB SXM over NVLink 4"
  source            = "KINDS.md (nvidia-h200-x2); measured.md; NVIDIA H200 SXM datasheet"
  nodes             = 1
  cost_per_gpu_hour = 3.5

  gpu {
    model              = "H200 141GB SXM"
    count              = 2
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
    kind           = "nvlink4"
    bandwidth_gbps = 450 # 900 GB/s bidirectional
    latency_us     = 1
    domain_size    = 2
  }

  network {
    kind = "none"
  }
}
