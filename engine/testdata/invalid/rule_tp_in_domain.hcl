# Tensor parallelism across the network.
# want: 13:18 Layout rule tp-in-domain
hardware "h" {
  profile = "nebius-h100-8"
  nodes   = 2
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  tp           = 16
  dp           = 1
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
