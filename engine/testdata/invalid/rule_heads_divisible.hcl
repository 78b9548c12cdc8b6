# Attention heads that do not split over tp (query and key/value heads alike).
# want: 13:18 Layout rule heads-divisible
# want: 13:18 Layout rule kv-heads-divisible
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "gpt2-124m"
}

layout "l" {
  tp           = 8
  dp           = 1
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
