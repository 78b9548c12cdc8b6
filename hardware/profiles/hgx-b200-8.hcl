# Source: /work/shared/reference/b200-8gpu-communication-chapter.md, "8x B200
# Best Practices / Hardware Configuration": 180 GB HBM3e and 7.8 TB/s per GPU,
# NVLink 5 at 1800 GB/s bidirectional, 1400 W per GPU (the chapter's figure;
# NVIDIA's HGX B200 material lists 1000 W).
# TFLOP/s: not in the chapter; NVIDIA HGX B200 datasheet (36 PFLOP/s bf16,
# 72 fp8, 18 tf32 for 8 GPUs, with sparsity), halved for dense, per GPU.
# Network: ASSUMPTION, not in the chapter: NVIDIA's HGX reference design of
# one 400 Gb/s InfiniBand NIC per GPU. Latencies:
# distributed-networking-notes.md (NVLink under 1 µs, InfiniBand 1-2 µs).
# Cost: ASSUMPTION, not in the references: an on-demand list price for B200
# seen in 2025, USD per GPU-hour. Override cost_per_gpu_hour.
hardware "hgx-b200-8" {
  description       = "HGX B200 node: 8x B200 180GB, NVLink 5, 8x 400G InfiniBand"
  source            = "b200-8gpu-communication-chapter.md (hardware configuration); NVIDIA HGX B200 datasheet"
  nodes             = 1
  cost_per_gpu_hour = 5.5

  gpu {
    model              = "B200 180GB"
    count              = 8
    memory_gib         = 180
    compute_capability = "10.0"
    hbm_tbps           = 7.8
    tdp_watts          = 1400

    tflops {
      bf16 = 2250
      fp16 = 2250
      fp8  = 4500
      tf32 = 1125
    }
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
