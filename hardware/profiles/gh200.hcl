# Source: NVIDIA GH200 Grace Hopper Superchip datasheet: one Hopper GPU
# with 96 GB HBM3 at 4 TB/s (the HBM3e part has 144 GB at 4.9 TB/s: set
# memory_gib and hbm_tbps), 989 TFLOP/s bf16 and fp16, 1,979 fp8 and 494
# tf32 dense, the module configurable from 450 W to 1,000 W (CPU and memory
# included; the upper end taken), NVLink-C2C to the Grace CPU. A node here
# is one superchip with one ConnectX-7 400 Gb/s InfiniBand NIC, as GH200
# servers commonly ship; there is no GPU peer inside it.
# The GPU's figures are in the GPU catalogue (gpus/gh200.hcl).
# Cost: ASSUMPTION, not from a datasheet: a guess at an on-demand list
# price, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "gh200" {
  description       = "NVIDIA GH200 Grace Hopper Superchip: one H100-class GPU with 96 GB HBM3, one 400G InfiniBand NIC"
  source            = "NVIDIA GH200 Grace Hopper Superchip datasheet"
  nodes             = 1
  cost_per_gpu_hour = 3.2

  gpu {
    datasheet = "gh200"
    count     = 1
  }

  interconnect {
    kind        = "none"
    domain_size = 1
  }

  network {
    kind           = "ib"
    nics_per_node  = 1
    nic_gbit       = 400
    gpudirect_rdma = true
    latency_us     = 2
  }
}
