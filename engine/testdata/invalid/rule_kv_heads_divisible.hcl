# Key/value heads that do not split over tp (query heads do).
# want: 13:18 Layout rule kv-heads-divisible
hardware "h" {
  profile = "h200-x4"
}

model "m" {
  preset   = "llama3-8b"
  kv_heads = 2
}

layout "l" {
  tp           = 4
  dp           = 1
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
