# A sequence that does not split over context parallelism.
# want: 13:18 Layout rule seq-divisible-cp
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset  = "llama2-7b"
  seq_len = 4097
}

layout "l" {
  cp           = 2
  dp           = 4
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
