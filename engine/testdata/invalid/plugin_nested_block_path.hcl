# A plugin diagnostic about the second of two nested blocks points into it.
# want: 10:13 Invalid check limit
stage "probe" "p" {
  count = 1

  check {
    limit = 1
  }
  check {
    limit = -1
  }
}
