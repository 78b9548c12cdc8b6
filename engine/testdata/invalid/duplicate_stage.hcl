# Two stages with one address.
# want: 8:1 Duplicate stage block
# detail: was already declared at
stage "probe" "p" {
  count = 1
}

stage "probe" "p" {
  count = 2
}
