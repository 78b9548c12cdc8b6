# Virtual pipeline stages without a pipeline.
# want: 13:18 Layout rule vp-requires-pp
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  dp           = 8
  vp           = 2
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
