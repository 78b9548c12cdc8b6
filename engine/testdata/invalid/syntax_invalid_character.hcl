# A character HCL does not know.
# want: 5:10 Invalid character
# want: 5:10 Missing newline after argument
layout "l" {
  tp = 2 @ 4
}
