nccl {
  ops         = ["all_reduce"]
  dtype       = "bf16"
  min_bytes   = "1MiB"
  max_bytes   = "1GiB"
  factor      = 4
  in_place    = false
  warmup      = 10
  iters       = 100
  min_batch_s = 0
  timeout     = "60s"
  expect { max_straggler_ratio = 1.1 }
}
