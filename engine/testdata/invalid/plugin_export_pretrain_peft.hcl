# A pretrain exporting adapters it does not have.
# want: 28:12 No adapters to export
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
  device   = "cpu"

  export {
    peft = "exports/adapters"
  }
}
