# A stage reading a dataset nobody declared.
# want: 9:11 Reference to undeclared dataset block
# detail: Did you mean "fineweb"?
dataset "fineweb" {
  path = "data/fineweb"
}

stage "probe" "p" {
  input = dataset.finewebb.path
}
