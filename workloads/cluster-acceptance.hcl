# Acceptance test of a GPU cluster before it takes real work: every GPU
# healthy, GEMM throughput and HBM bandwidth near their peaks, NCCL
# all-reduce bandwidth over NVLink and, with more than one node, over the
# network.
#
# Source: "Nebius H100 GPU Cluster - Complete Technical Guide"
# (docs/references.md), 5.3 and 7 (the suite: health, 16384^3 matmul, 32 GB
# memory copy, NCCL all-reduce; pass marks: bf16 above 700 of 989 TFLOP/s,
# memory above 2.5 of 3.35 TB/s, all-reduce above 400 GB/s on 8 GPUs) and
# 10.1 (results that passed: 731 TFLOP/s, 3.02 TB/s, 442 GB/s); "Nebius H100
# 16-GPU Multi-Node Benchmark" (docs/references.md; 2 nodes: all-reduce
# above 350 GB/s, 1 MB to 1 GB messages, 435 GB/s seen). The reference's
# fifth check, training throughput, is a pretrain stage's job: see
# workloads/h200-lab.hcl.
#
# With nodes above 1 this release checks the node the stage runs on and
# warns so; NCCL across nodes comes with the Slurm executor (see
# docs/multinode.md).
#
# The compute and memory marks are kept as shares of the profile's peaks,
# so the same file accepts other GPUs:
#
#   gpuflow plan workloads/cluster-acceptance.hcl
#   gpuflow plan -var nodes=2 workloads/cluster-acceptance.hcl
#   gpuflow plan -var profile=h200-x4 -var min_busbw_gbps=320 workloads/cluster-acceptance.hcl

variable "profile" {
  type        = string
  description = "Built-in hardware profile of one node (gpuflow hardware list)."
  default     = "nebius-h100-8"
}

variable "nodes" {
  type        = number
  description = "Nodes to test together."
  default     = 1

  validation {
    condition     = var.nodes >= 1 && floor(var.nodes) == var.nodes
    error_message = "nodes must be a whole number of at least 1."
  }
}

variable "min_busbw_gbps" {
  type        = number
  description = "All-reduce bus bandwidth to pass, GB/s; null takes the reference's mark for the node count."
  default     = null
}

locals {
  gemm_share = 700 / 989  # bf16 pass mark over H100 peak
  hbm_share  = 2.5 / 3.35 # copy bandwidth pass mark over H100 peak
  busbw_gbps = coalesce(var.min_busbw_gbps, var.nodes > 1 ? 350 : 400)
}

hardware "cluster" {
  profile = var.profile
  nodes   = var.nodes
}

# What the reference's hardware_info.sh shows first: how the GPUs and NICs
# are wired, kept in the run log next to the figures.
stage "exec" "topology" {
  command = ["nvidia-smi", "topo", "-m"]
  timeout = "1m"
}

stage "benchmark" "acceptance" {
  hardware = hardware.cluster

  health {}

  gemm {
    dtypes = ["bf16"]
    sizes  = [16384]
    expect {
      min_tflops = { bf16 = floor(local.gemm_share * hardware.cluster.tflops.bf16) }
    }
  }

  hbm {
    bytes = "32GB" # the reference copies a 32 GB tensor
    expect {
      min_tbps = local.hbm_share * hardware.cluster.hbm_bytes_per_s / 1e12
    }
  }

  nccl {
    ops       = ["all_reduce"]
    dtype     = "bf16"
    min_bytes = "1MiB"
    max_bytes = "1GiB"
    expect {
      min_busbw_gbps = local.busbw_gbps
    }
  }
}
