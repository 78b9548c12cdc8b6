# A local closer to zero than any 64-bit float.
# want: 4:7 Number out of range
locals {
  x = -1e-99999
}
