# Source: reference measurements on a virtual machine with 4 NVIDIA H200 of
# a shared host: nvidia-smi reports 143771 MiB each, all pairs NV18 through
# NVSwitch; nothing outside the machine is reachable, so no network. The
# NVLink domain is the machine's 4 GPUs, not the host's whole board. The
# figures below are datasheet peaks (the GPU catalogue, gpus/h200-sxm.hcl;
# NVLink 900 GB/s bidirectional), as for every profile. Plain PyTorch
# reached there: P2P copy 394 GB/s, NCCL all_reduce busbw up to 363 GB/s,
# GEMM 746 TFLOP/s bf16 and 1406 fp8, HBM copy 4.22 TB/s (reference
# measurements).
# NVLink multicast is off: on a host shared between virtual machines,
# NVLink SHARP (NVLS) multicast is not safe for the other tenants' GPUs.
# Cost: ASSUMPTION, not in the references: the H200 list price used for
# hgx-h200-8, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "h200-x4" {
  description       = "Shared virtual machine: 4x H200 141GB SXM over NVLink 4 (NVSwitch)"
  source            = "NVIDIA H200 Tensor Core GPU datasheet; reference measurements"
  nodes             = 1
  cost_per_gpu_hour = 3.5

  gpu {
    datasheet  = "h200-sxm"
    count      = 4
    memory_gib = 143771 / 1024 # MiB seen by nvidia-smi
  }

  interconnect {
    kind             = "nvlink4"
    bandwidth_gbps   = 450 # 900 GB/s bidirectional
    latency_us       = 1
    domain_size      = 4
    nvlink_multicast = false
  }

  network {
    kind = "none"
  }
}
