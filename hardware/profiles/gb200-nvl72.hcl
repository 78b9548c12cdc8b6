# Source: "Tuning Distributed Networking Communication", NVL72 sections: 72 GPUs in one
# NVLink domain, 18 compute trays of 4 GPUs, 1.8 TB/s NVLink per GPU,
# NVLink latency under 1 µs, InfiniBand 1-2 µs. GPU figures: the NVIDIA
# GB200 NVL72 datasheet, in the GPU catalogue (gpus/b200-gb200.hcl).
# Network: ASSUMPTION, not in the references: one 400 Gb/s InfiniBand
# ConnectX-7 per GPU, as GB200 compute trays commonly ship.
# Cost: ASSUMPTION, not in the references: a guess at an on-demand list
# price for GB200, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "gb200-nvl72" {
  description       = "GB200 NVL72 rack: 72 B200 GPUs in one NVLink 5 domain, 18 trays of 4"
  source            = "Tuning Distributed Networking Communication (NVL72); NVIDIA GB200 NVL72 datasheet"
  nodes             = 18
  cost_per_gpu_hour = 6

  gpu {
    datasheet = "b200-gb200"
    count     = 4
  }

  interconnect {
    kind           = "nvlink5"
    bandwidth_gbps = 900 # 1.8 TB/s bidirectional
    latency_us     = 1
    domain_size    = 72
  }

  network {
    kind           = "ib"
    nics_per_node  = 4
    nic_gbit       = 400
    gpudirect_rdma = true
    latency_us     = 2
  }
}
