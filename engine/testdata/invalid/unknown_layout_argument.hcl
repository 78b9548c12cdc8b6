# A misspelled layout argument.
# want: 6:3 Unsupported argument
# detail: Did you mean "micro_batch"?
layout "l" {
  dp           = 8
  micro_bach   = 4
  global_batch = 256
}
