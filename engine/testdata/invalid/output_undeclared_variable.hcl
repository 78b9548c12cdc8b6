# An output reading a variable nobody declared.
# want: 9:11 Reference to undeclared input variable
# detail: Did you mean "nodes"?
variable "nodes" {
  default = 1
}

output "gpus" {
  value = var.node * 8
}
