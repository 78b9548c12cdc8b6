# An argument at the top level, where only blocks belong.
# want: 3:1 Unsupported argument
nodes = 2

hardware "h" {
  profile = "nebius-h100-8"
}
