# A finetune stage without its lora block.
# want: 18:25 Missing lora block
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

stage "finetune" "lora" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
  data     = "data/shards"
  base     = "checkpoints/base"
  lr       = 2e-5
  steps    = 100
}
