# A default that breaks the variable's own rule.
# want: 8:21 Invalid value for variable
# detail: nodes must be at least 1.
variable "nodes" {
  type    = number
  default = 0
  validation {
    condition     = var.nodes >= 1
    error_message = "nodes must be at least 1."
  }
}
