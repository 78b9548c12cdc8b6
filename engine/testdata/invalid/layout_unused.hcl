# A layout no stage uses is still checked.
# want: 4:18 Layout rule positive-degree
layout "spare" {
  tp           = 0
  dp           = 1
  micro_batch  = 1
  global_batch = 1
}

stage "probe" "p" {}
