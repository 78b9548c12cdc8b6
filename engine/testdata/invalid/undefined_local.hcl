# A reference to a local nobody declared.
# want: 6:8 Reference to undeclared local value
# detail: Did you mean "tp"?
locals {
  tp = 2
  dp = local.tq * 2
}
