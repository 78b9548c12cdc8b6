# Validation every two and a half steps.
# want: 26:16 Invalid eval_every
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  tp           = 2
  dp           = 4
  micro_batch  = 1
  fsdp         = true
  global_batch = 8
}

stage "pretrain" "main" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
  data     = "data/shards"
  lr       = 3e-4
  steps    = 1000
  eval_every = 2.5
}
