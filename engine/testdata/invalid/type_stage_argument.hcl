# Text where the plugin's schema wants a number.
# want: 4:11 Incorrect attribute value type
stage "probe" "p" {
  count = "many"
}
