# Source: reference measurements on a virtual machine with 2 NVIDIA H200 of
# a shared host: nvidia-smi reports 143771 MiB each; nothing outside the
# machine is reachable, so no network. How the two are linked was not
# recorded; NVLink 4 through NVSwitch is ASSUMED from the same hosts' 4-GPU
# machines (all pairs NV18 there). Peaks: the GPU catalogue
# (gpus/h200-sxm.hcl); NVLink 900 GB/s bidirectional from the NVIDIA H200
# datasheet.
# NVLink multicast is off: on a host shared between virtual machines,
# NVLink SHARP (NVLS) multicast is not safe for the other tenants' GPUs.
# Cost: ASSUMPTION, not in the references: the H200 list price used for
# hgx-h200-8, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "h200-x2" {
  description       = "Shared virtual machine: 2x H200 141GB SXM over NVLink 4"
  source            = "NVIDIA H200 Tensor Core GPU datasheet; reference measurements"
  nodes             = 1
  cost_per_gpu_hour = 3.5

  gpu {
    datasheet  = "h200-sxm"
    count      = 2
    memory_gib = 143771 / 1024 # MiB seen by nvidia-smi
  }

  interconnect {
    kind             = "nvlink4"
    bandwidth_gbps   = 450 # 900 GB/s bidirectional
    latency_us       = 1
    domain_size      = 2
    nvlink_multicast = false
  }

  network {
    kind = "none"
  }
}
