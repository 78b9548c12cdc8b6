# Source: "NVIDIA B300 Part 2: Dell XE9780 System Configuration":
# "Hardware Configuration" (8x B300, NVLink 5 at 1.8 TB/s bidirectional,
# 800 Gbps RoCEv2) and "Network Interface Configuration" (one 800G
# ConnectX-8, or two 400G ConnectX-7, GPUDirect RDMA capable). The GPU's
# figures are the guide's, in the GPU catalogue (gpus/b300-xe9780.hcl).
# Latencies: "Tuning Distributed Networking Communication" (NVLink under 1 µs,
# InfiniBand 1-2 µs; RoCE taken as the same, an ASSUMPTION).
# Cost: ASSUMPTION, not in the references: a guess at an on-demand list
# price for B300, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "dell-xe9780-b300" {
  description       = "Dell PowerEdge XE9780: 8x B300 192GB, NVLink 5, 800G RoCEv2"
  source            = "Dell XE9780 system guide (system architecture overview, RoCEv2 networking)"
  nodes             = 1
  cost_per_gpu_hour = 6.5

  gpu {
    datasheet = "b300-xe9780"
    count     = 8
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
