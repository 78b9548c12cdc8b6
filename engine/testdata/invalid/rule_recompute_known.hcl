# A recompute choice that does not exist.
# want: 15:18 Layout rule recompute-known
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
  recompute    = "some"
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
