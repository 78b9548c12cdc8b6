# depends_on given a single reference instead of a list.
# want: 8:16 Invalid depends_on
stage "probe" "a" {
  count = 1
}

stage "probe" "b" {
  depends_on = stage.probe.a
}
