# An output whose expression cannot be evaluated is an error, not an
# unknown value.
# want: 8:11 Invalid operand
model "m" {
  preset = "gpt2-124m"
}
output "bad" {
  value = "a" + 1
}
