# Pipeline stages that do not split into virtual stages.
# want: 13:18 Layout rule layers-divisible
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  pp           = 2
  vp           = 3
  dp           = 4
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
