# A training precision that does not exist.
# want: 15:18 Layout rule precision-known
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  dp           = 8
  micro_batch  = 1
  global_batch = 8
  precision    = "int4"
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
