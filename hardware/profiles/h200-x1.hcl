# Source: reference measurements on a virtual machine with one NVIDIA H200
# of a shared host: nvidia-smi reports 143771 MiB; a single GPU, so no
# NVLink peer and no network. Peaks: the GPU catalogue (gpus/h200-sxm.hcl).
# Plain PyTorch reached 769-798 TFLOP/s on an 8192^3 bf16 matmul and about
# 4.3 TB/s on a device copy there (reference measurements).
# NVLink multicast is off: on a host shared between virtual machines,
# NVLink SHARP (NVLS) multicast is not safe for the other tenants' GPUs.
# Cost: ASSUMPTION, not in the references: the H200 list price used for
# hgx-h200-8, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "h200-x1" {
  description       = "Shared virtual machine: one H200 141GB SXM"
  source            = "NVIDIA H200 Tensor Core GPU datasheet; reference measurements"
  nodes             = 1
  cost_per_gpu_hour = 3.5

  gpu {
    datasheet  = "h200-sxm"
    count      = 1
    memory_gib = 143771 / 1024 # MiB seen by nvidia-smi
  }

  interconnect {
    kind             = "none"
    domain_size      = 1
    nvlink_multicast = false
  }

  network {
    kind = "none"
  }
}
