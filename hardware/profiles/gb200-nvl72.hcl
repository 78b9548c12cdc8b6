# Source: /work/shared/reference/distributed-networking-notes.md, NVL72
# sections: 72 GPUs in one NVLink domain, 18 compute trays of 4 GPUs,
# 1.8 TB/s NVLink per GPU, NVLink latency under 1 µs, InfiniBand 1-2 µs.
# GPU figures: NVIDIA GB200 NVL72 datasheet, per GPU: 13.4 TB HBM3e and
# 576 TB/s per rack (186 GB, 8 TB/s each); 360 PFLOP/s bf16, 720 fp8 and
# 180 tf32 per rack with sparsity, halved for dense; 1200 W per GPU.
# Network: ASSUMPTION, not in the references: one 400 Gb/s InfiniBand
# ConnectX-7 per GPU, as GB200 compute trays commonly ship.
# Cost: ASSUMPTION, not in the references: a guess at an on-demand list
# price for GB200, USD per GPU-hour. Override cost_per_gpu_hour.
hardware "gb200-nvl72" {
  description       = "GB200 NVL72 rack: 72 B200 GPUs in one NVLink 5 domain, 18 trays of 4"
  source            = "distributed-networking-notes.md (NVL72); NVIDIA GB200 NVL72 datasheet"
  nodes             = 18
  cost_per_gpu_hour = 6

  gpu {
    model              = "B200 (GB200 superchip)"
    count              = 4
    memory_gib         = 186
    compute_capability = "10.0"
    hbm_tbps           = 8
    tdp_watts          = 1200

    tflops {
      bf16 = 2500
      fp16 = 2500
      fp8  = 5000
      tf32 = 1250
    }
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
