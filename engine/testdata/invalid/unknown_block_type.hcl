# A misspelled top-level block.
# want: 4:1 Unsupported block type
# detail: Did you mean "hardware"?
hardwares "h" {
  profile = "nebius-h100-8"
}
