# A hardware override reading a variable nobody declared.
# want: 9:13 Reference to undeclared input variable
variable "nodes" {
  default = 2
}

hardware "h" {
  profile = "nebius-h100-8"
  nodes   = var.node_count
}
