# Degrees whose product is more GPUs than any hardware holds.
# want: 6:18 Layout rule world-size
layout "l" {
  tp           = 65536
  pp           = 65536
  dp           = 65536
  micro_batch  = 1
  global_batch = 65536
}
