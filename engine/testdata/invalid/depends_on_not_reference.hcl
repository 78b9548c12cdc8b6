# depends_on holding a string instead of a reference.
# want: 8:17 Invalid depends_on reference
stage "probe" "a" {
  count = 1
}

stage "probe" "b" {
  depends_on = ["stage.probe.a"]
}
