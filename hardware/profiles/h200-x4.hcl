# Source: /work/shared/reference/measured.md, "4x H200 (kind nvidia-h200-x4)":
# all pairs NV18 through NVSwitch, NVLS disabled; P2P copy 394 GB/s, NCCL
# all_reduce busbw up to 363 GB/s, GEMM 746 TFLOP/s bf16 and 1406 fp8, HBM
# copy 4.22 TB/s. /work/.library/device/KINDS.md: 4 GPUs of 143771 MiB, one
# host, nothing outside reachable, so no network.
# The figures below are datasheet peaks (H200 SXM: 989 bf16, 1979 fp8 dense,
# 4.8 TB/s, NVLink 900 GB/s bidirectional), as for every profile; the
# measured figures above are what a run there can reach.
# The NVLink domain is the 4 GPUs lent, not the host's whole board.
# Cost: ASSUMPTION, not in the references: the H200 list price used for
# hgx-h200-8, USD per GPU-hour. Override cost_per_gpu_hour.
hardware "h200-x4" {
  description       = "Lent machine nvidia-h200-x4: 4x H200 141GB SXM over NVLink 4 (NVSwitch)"
  source            = "measured.md (4x H200); KINDS.md (nvidia-h200-x4); NVIDIA H200 SXM datasheet"
  nodes             = 1
  cost_per_gpu_hour = 3.5

  gpu {
    model              = "H200 141GB SXM"
    count              = 4
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
    domain_size    = 4
  }

  network {
    kind = "none"
  }
}
