# A stage training a model nobody declared.
# want: 4:11 Reference to undeclared model block
stage "probe" "p" {
  model = model.llama
}
