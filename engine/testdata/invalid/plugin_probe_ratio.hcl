# A value the probe plugin rejects in its validation.
# want: 5:11 Invalid ratio
stage "probe" "p" {
  count = 1
  ratio = 1.5
}
