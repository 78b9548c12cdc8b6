# A pretrain stage without its required learning rate.
# want: 18:25 Missing required argument
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

stage "pretrain" "main" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
  data     = "data/shards"
  steps    = 1000
}
