# A stage name that is not an identifier.
# want: 3:15 Invalid stage label
stage "probe" "my stage" {
  count = 1
}
