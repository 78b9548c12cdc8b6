# A variable default beyond a 64-bit float.
# want: 5:13 Number out of range
variable "tokens" {
  type    = number
  default = 1e999
}
