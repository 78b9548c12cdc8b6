# Source: NVIDIA DGX H100 datasheet: 8x H100 80GB SXM5, 640 GB GPU memory,
# four NVSwitches (900 GB/s NVLink 4 per GPU, both directions together),
# eight single-port ConnectX-7 400 Gb/s InfiniBand/Ethernet for the compute
# fabric, about 10.2 kW maximum system power. GPU figures: NVIDIA H100
# Tensor Core GPU datasheet, SXM5, dense: 989 TFLOP/s bf16 and fp16, 1,979
# fp8, 494 tf32, 3.35 TB/s HBM3, up to 700 W. Latencies as the other
# NVLink/InfiniBand profiles.
# The GPU's figures are in the GPU catalogue (gpus/h100-sxm.hcl).
# Cost: ASSUMPTION, not from a datasheet: a guess at an on-demand list
# price, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "dgx-h100" {
  description         = "NVIDIA DGX H100: 8x H100 80GB SXM5, NVLink 4, 8x 400G InfiniBand"
  source              = "NVIDIA DGX H100 datasheet; NVIDIA H100 Tensor Core GPU datasheet"
  nodes               = 1
  cost_per_gpu_hour   = 2.95
  node_overhead_watts = 4600 # 10.2 kW maximum system power less 8 x 700 W

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
