# A node count far beyond any cluster.
# want: 5:13 Invalid value for nodes
hardware "h" {
  profile = "nebius-h100-8"
  nodes   = 1e400
}
