# Text where a number belongs.
# want: 4:18 Incorrect attribute value type
layout "l" {
  tp           = "two"
  dp           = 4
  micro_batch  = 1
  global_batch = 8
}
