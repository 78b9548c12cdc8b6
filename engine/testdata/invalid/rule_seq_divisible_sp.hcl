# Sequence-parallel chunks that do not split over tp.
# want: 13:23 Layout rule seq-divisible-sp
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset  = "llama2-7b"
  seq_len = 4100
}

layout "l" {
  tp                = 8
  dp                = 1
  micro_batch       = 1
  global_batch      = 8
  sequence_parallel = true
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
