# Source: NVIDIA H200 SXM datasheet (141 GB HBM3e, 4.8 TB/s, NVLink 900 GB/s
# bidirectional, up to 700 W) and /work/shared/reference/measured.md
# ("Published references": 989 TFLOP/s bf16, 1979 fp8 dense). fp16 and tf32:
# the datasheet's dense figures.
# Network: ASSUMPTION, not in the references: NVIDIA's HGX reference design
# of one 400 Gb/s InfiniBand NIC per GPU. Latencies:
# distributed-networking-notes.md (NVLink under 1 µs, InfiniBand 1-2 µs).
# Cost: ASSUMPTION, not in the references: an on-demand list price for H200
# seen in 2025, USD per GPU-hour. Override cost_per_gpu_hour.
hardware "hgx-h200-8" {
  description       = "HGX H200 node: 8x H200 141GB SXM, NVLink 4, 8x 400G InfiniBand"
  source            = "NVIDIA H200 SXM datasheet; measured.md (published references)"
  nodes             = 1
  cost_per_gpu_hour = 3.5

  gpu {
    model              = "H200 141GB SXM"
    count              = 8
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

  interconnect {
    kind           = "nvlink4"
    bandwidth_gbps = 450 # 900 GB/s bidirectional
    latency_us     = 1
    domain_size    = 8
  }

  network {
    kind           = "ib"
    nics_per_node  = 8
    nic_gbit       = 400
    gpudirect_rdma = true
    latency_us     = 2
  }
}
