# Covers fidelity.py's NCCL_* sizes (1 MiB, 16 MiB, 256 MiB, 1 GiB) and
# the steps between them, in place too.
nccl {
  ops         = ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"]
  dtype       = "bf16"
  min_bytes   = "1MiB"
  max_bytes   = "1GiB"
  factor      = 4
  warmup      = 5
  iters       = 20
  min_batch_s = 0.05
  timeout     = "60s"
}
