# A layout without its data-parallel degree.
# want: 3:1 Missing layout argument
layout "l" {
  tp           = 2
  micro_batch  = 1
  global_batch = 8
}
