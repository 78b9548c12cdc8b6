# Source: reference measurements on a virtual machine with one NVIDIA H100
# 80GB HBM3 of a shared host: nvidia-smi reports 81559 MiB; a single GPU, so
# no NVLink peer and no network. Peaks: the GPU catalogue
# (gpus/h100-sxm.hcl). Plain PyTorch reached 798 TFLOP/s on an 8192^3 bf16
# matmul and about 3.0 TB/s on a device copy there (reference measurements).
# NVLink multicast is off: on a host shared between virtual machines,
# NVLink SHARP (NVLS) multicast is not safe for the other tenants' GPUs.
# Cost: ASSUMPTION, not in the references: the H100 list price used for
# nebius-h100-8, USD per GPU-hour. Override cost_per_gpu_hour.
# See docs/references.md for the sources.
hardware "h100-x1" {
  description       = "Shared virtual machine: one H100 80GB SXM"
  source            = "NVIDIA H100 Tensor Core GPU datasheet; reference measurements"
  nodes             = 1
  cost_per_gpu_hour = 2.95

  gpu {
    datasheet  = "h100-sxm"
    count      = 1
    memory_gib = 81559 / 1024 # MiB seen by nvidia-smi
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
