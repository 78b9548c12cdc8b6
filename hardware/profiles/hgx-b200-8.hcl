# Source: the B200 multi-GPU communication chapter, "8x B200 Best Practices /
# Hardware Configuration": NVLink 5 at 1800 GB/s bidirectional. GPU
# figures: the GPU catalogue (gpus/b200-hgx.hcl).
# Network: ASSUMPTION, not in the chapter: NVIDIA's HGX reference design of
# one 400 Gb/s InfiniBand NIC per GPU. Latencies: the distributed networking
# notes (NVLink under 1 µs, InfiniBand 1-2 µs).
# Cost: ASSUMPTION, not in the references: an on-demand list price for B200
# seen in 2025, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "hgx-b200-8" {
  description       = "HGX B200 node: 8x B200 180GB, NVLink 5, 8x 400G InfiniBand"
  source            = "B200 multi-GPU communication chapter (hardware configuration); NVIDIA HGX B200 datasheet"
  nodes             = 1
  cost_per_gpu_hour = 5.5

  gpu {
    datasheet = "b200-hgx"
    count     = 8
  }

  interconnect {
    kind           = "nvlink5"
    bandwidth_gbps = 900 # 1800 GB/s bidirectional
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
