# A type constraint that is not a type.
# want: 4:13 Invalid type specification
variable "nodes" {
  type    = integer
  default = 2
}
