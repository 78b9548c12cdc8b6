# A global batch that is not a multiple of micro_batch*dp.
# want: 15:18 Layout rule global-batch-divisible
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  tp           = 2
  dp           = 4
  micro_batch  = 4
  global_batch = 100
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
