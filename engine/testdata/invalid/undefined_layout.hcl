# A stage using a layout nobody declared.
# want: 12:12 Reference to undeclared layout block
# detail: Did you mean "tp2"?
layout "tp2" {
  tp           = 2
  dp           = 4
  micro_batch  = 1
  global_batch = 8
}

stage "probe" "p" {
  layout = layout.tp4
}
