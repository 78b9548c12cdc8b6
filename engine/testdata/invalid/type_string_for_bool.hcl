# Text where true or false belongs.
# want: 7:18 Incorrect attribute value type
layout "l" {
  dp           = 8
  micro_batch  = 1
  global_batch = 8
  fsdp         = "yes"
}
