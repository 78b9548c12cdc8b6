# Independent mistakes in one file are all reported at once.
# want: 7:13 Unknown hardware profile
# want: 11:12 Unknown model preset
# want: 18:18 Incorrect attribute value type
# want: 22:11 Reference to undeclared stage
hardware "h" {
  profile = "nebius-h100"
}

model "m" {
  preset = "llama-7b"
}

layout "l" {
  tp           = 2
  dp           = 4
  global_batch = 8
  micro_batch  = true
}

stage "probe" "p" {
  input = stage.probe.missing.outputs.x
}
