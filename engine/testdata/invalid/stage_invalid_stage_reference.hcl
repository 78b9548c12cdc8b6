# A stage reference without the stage's name.
# want: 8:11 Invalid stage reference
stage "probe" "a" {
  count = 1
}

stage "probe" "b" {
  input = stage.probe
}
