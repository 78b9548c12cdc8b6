# A stage argument too large to carry: writing it out in full took minutes.
# want: 4:11 Number out of range
stage "probe" "p" {
  count = 1e10000000
}
