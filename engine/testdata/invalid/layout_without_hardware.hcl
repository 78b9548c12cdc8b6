# A stage with a layout but no hardware or model to check it against.
# want: 10:12 Layout without hardware and model
layout "l" {
  dp           = 8
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  layout = layout.l
}
