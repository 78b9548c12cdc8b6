# Source: NVIDIA H200 Tensor Core GPU datasheet (NVLink 900 GB/s
# bidirectional); the GPU's figures are in the GPU catalogue
# (gpus/h200-sxm.hcl).
# Network: ASSUMPTION, not in the references: NVIDIA's HGX reference design
# of one 400 Gb/s InfiniBand NIC per GPU. Latencies: "Tuning Distributed
# Networking Communication" (NVLink under 1 µs, InfiniBand 1-2 µs).
# Cost: ASSUMPTION, not in the references: an on-demand list price for H200
# seen in 2025, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "hgx-h200-8" {
  description       = "HGX H200 node: 8x H200 141GB SXM, NVLink 4, 8x 400G InfiniBand"
  source            = "NVIDIA H200 Tensor Core GPU datasheet"
  nodes             = 1
  cost_per_gpu_hour = 3.5

  gpu {
    datasheet = "h200-sxm"
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
