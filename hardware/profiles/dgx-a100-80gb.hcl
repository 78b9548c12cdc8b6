# Source: NVIDIA DGX A100 datasheet (80GB edition): 8x A100 80GB SXM4,
# 640 GB GPU memory, six NVSwitches (600 GB/s NVLink 3 per GPU, both
# directions together), eight single-port ConnectX-6 200 Gb/s HDR
# InfiniBand for the compute fabric, 6.5 kW maximum system power. GPU
# figures: NVIDIA A100 Tensor Core GPU datasheet, SXM4 80GB: 312 TFLOP/s
# bf16 and fp16 dense, 156 tf32 dense, no fp8, 2,039 GB/s HBM2e, 400 W.
# Latencies as the other NVLink/InfiniBand profiles (NVLink under 1 µs,
# InfiniBand about 2 µs).
# The GPU's figures are in the GPU catalogue (gpus/a100-sxm4-80gb.hcl).
# Cost: ASSUMPTION, not from a datasheet: a guess at an on-demand list
# price, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "dgx-a100-80gb" {
  description         = "NVIDIA DGX A100 80GB: 8x A100 80GB SXM4, NVLink 3, 8x 200G HDR InfiniBand"
  source              = "NVIDIA DGX A100 datasheet; NVIDIA A100 Tensor Core GPU datasheet"
  nodes               = 1
  cost_per_gpu_hour   = 1.8
  node_overhead_watts = 3300 # 6.5 kW maximum system power less 8 x 400 W

  gpu {
    datasheet = "a100-sxm4-80gb"
    count     = 8
  }

  interconnect {
    kind           = "nvlink3"
    bandwidth_gbps = 300 # 600 GB/s bidirectional
    latency_us     = 1
    domain_size    = 8
  }

  network {
    kind           = "ib"
    nics_per_node  = 8
    nic_gbit       = 200
    gpudirect_rdma = true
    latency_us     = 2
  }
}
