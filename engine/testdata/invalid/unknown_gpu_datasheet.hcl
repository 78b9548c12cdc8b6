# A GPU datasheet that the catalogue does not hold.
# want: 10:17 Unknown GPU datasheet
# detail: Did you mean "h200-sxm"?
variable "profile" {
  default = "h200-x4"
}
hardware "h" {
  profile = var.profile
  gpu {
    datasheet = "h200-sx"
  }
}
