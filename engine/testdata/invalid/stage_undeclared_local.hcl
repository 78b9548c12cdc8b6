# A stage body reading a local nobody declared.
# want: 9:11 Reference to undeclared local value
# detail: Did you mean "steps"?
locals {
  steps = 100
}

stage "probe" "p" {
  count = local.step
}
