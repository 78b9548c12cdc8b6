# ZeRO and FSDP together.
# want: 14:18 Layout rule zero-fsdp-exclusive
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  dp           = 8
  zero         = 2
  fsdp         = true
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
