# A local reading a variable nobody declared.
# want: 9:11 Reference to undeclared input variable
# detail: Did you mean "gpus_per_node"?
variable "gpus_per_node" {
  default = 8
}

locals {
  world = var.gpus_per_nod * 2
}
