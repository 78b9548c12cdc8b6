# Layers that do not split into pipeline stages.
# want: 13:18 Layout rule layers-divisible
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "llama2-7b"
  layers = 30
}

layout "l" {
  pp           = 4
  dp           = 2
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
