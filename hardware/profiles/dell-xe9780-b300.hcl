# Source: /work/shared/reference/b300-xe9780-system-guide.md: "Hardware
# Configuration" (8x B300, 192 GB HBM3e each, NVLink 5 at 1.8 TB/s
# bidirectional, 800 Gbps RoCEv2), "B300 GPU Specifications" (2.25 PFLOP/s
# fp8, 1.125 bf16/fp16, 8 TB/s, 700 W) and "Network Interface Configuration"
# (one 800G ConnectX-8, or two 400G ConnectX-7, GPUDirect RDMA capable).
# These are the guide's claims, in part vendor projections, not
# measurements. NVIDIA's own B300 material differs: 288 GB HBM3e, a higher
# TDP, and dense bf16 about twice the guide's figure. Override gpu figures
# where your system reports otherwise.
# tf32: not in the guide; set to half of bf16, the ratio NVIDIA's datasheets
# give for every tensor-core generation since Ampere.
# Latencies: distributed-networking-notes.md (NVLink under 1 µs, InfiniBand
# 1-2 µs; RoCE taken as the same, an ASSUMPTION).
# Cost: ASSUMPTION, not in the references: a guess at an on-demand list
# price for B300, USD per GPU-hour. Override cost_per_gpu_hour.
hardware "dell-xe9780-b300" {
  description       = "Dell PowerEdge XE9780: 8x B300 192GB, NVLink 5, 800G RoCEv2"
  source            = "b300-xe9780-system-guide.md (system architecture overview, RoCEv2 networking)"
  nodes             = 1
  cost_per_gpu_hour = 6.5

  gpu {
    model              = "B300 192GB"
    count              = 8
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

  interconnect {
    kind           = "nvlink5"
    bandwidth_gbps = 900 # 1.8 TB/s bidirectional
    latency_us     = 1
    domain_size    = 8
  }

  network {
    kind           = "roce"
    nics_per_node  = 1
    nic_gbit       = 800
    gpudirect_rdma = true
    latency_us     = 2
  }
}
