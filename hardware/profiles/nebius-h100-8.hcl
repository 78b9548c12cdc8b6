# Source: "Nebius H100 GPU Cluster - Complete Technical Guide", section 3.3
# (hardware table: H100 80GB HBM3, 989 TFLOP/s bf16, NVLink 900 GB/s
# bidirectional, 400 Gb/s InfiniBand per port), the cluster diagram (8x
# InfiniBand 400Gb/s per node) and section 7.3 (3.35 TB/s HBM3 expected).
# The GPU's figures are in the GPU catalogue (gpus/h100-sxm.hcl).
# Latencies: "Tuning Distributed Networking Communication" (NVLink under 1 µs,
# InfiniBand about 1-2 µs); upper ends taken.
# Cost: ASSUMPTION, not in the references: Nebius on-demand list price for
# H100 seen in 2025, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "nebius-h100-8" {
  description       = "Nebius node: 8x H100 80GB SXM, NVLink 4, 8x 400G InfiniBand"
  source            = "Nebius H100 cluster guide 3.3; NVIDIA H100 Tensor Core GPU datasheet"
  nodes             = 1
  cost_per_gpu_hour = 2.95

  gpu {
    datasheet = "h100-sxm"
    count     = 8
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
