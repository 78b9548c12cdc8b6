# A misspelled hardware override.
# want: 6:3 Unsupported argument
# detail: Did you mean "nodes"?
hardware "h" {
  profile = "nebius-h100-8"
  node    = 2
}
