# Source: /work/shared/reference/nebius-h100-cluster-guide.md, section 3.3
# (hardware table: H100 80GB HBM3, 989 TFLOP/s bf16, NVLink 900 GB/s
# bidirectional, 400 Gb/s InfiniBand per port), the cluster diagram (8x
# InfiniBand 400Gb/s per node) and section 7.3 (3.35 TB/s HBM3 expected).
# fp16, fp8, tf32 and TDP: NVIDIA H100 SXM datasheet, dense (no sparsity).
# Latencies: distributed-networking-notes.md (NVLink under 1 µs, InfiniBand
# about 1-2 µs); upper ends taken.
# Cost: ASSUMPTION, not in the references: Nebius on-demand list price for
# H100 seen in 2025, USD per GPU-hour. Override cost_per_gpu_hour.
hardware "nebius-h100-8" {
  description       = "Nebius node: 8x H100 80GB SXM, NVLink 4, 8x 400G InfiniBand"
  source            = "nebius-h100-cluster-guide.md 3.3; NVIDIA H100 SXM datasheet"
  nodes             = 1
  cost_per_gpu_hour = 2.95

  gpu {
    model              = "H100 80GB SXM"
    count              = 8
    memory_gib         = 80
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
