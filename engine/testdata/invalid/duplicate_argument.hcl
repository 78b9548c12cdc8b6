# One argument set twice in a block.
# want: 5:3 Attribute redefined
layout "l" {
  tp           = 2
  tp           = 4
  dp           = 2
  micro_batch  = 1
  global_batch = 8
}
