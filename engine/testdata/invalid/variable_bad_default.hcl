# A default that does not match the declared type.
# want: 5:13 Invalid default value for variable
variable "nodes" {
  type    = number
  default = "two"
}
