# A string that never closes.
# want: 6:22 Invalid multi-line string
# want: 6:22 Unterminated template string
# want: 7:2 Invalid multi-line string
model "m" {
  preset = "llama2-7b
}
