# A device the trainer does not run on.
# want: 25:14 Unknown device
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
  global_batch = 8
}

stage "pretrain" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
  data     = "data/shards"
  lr       = 2e-5
  steps    = 100
  device   = "tpu"
}
