# Two variables with one name.
# want: 8:1 Duplicate variable block
# detail: was already declared at
variable "nodes" {
  default = 1
}

variable "nodes" {
  default = 2
}
