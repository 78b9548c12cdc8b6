# A reference that starts with no known namespace.
# want: 5:11 Unknown reference
# detail: Did you mean "model"?
stage "probe" "p" {
  input = modle.llama
}
