# A stage argument the plugin's schema does not have.
# want: 5:3 Unsupported argument
# detail: Did you mean "count"?
stage "probe" "p" {
  cont = 3
}
