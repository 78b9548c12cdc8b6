# A preset that does not exist.
# want: 5:12 Unknown model preset
# detail: Did you mean "llama2-7b"?
model "m" {
  preset = "llama2-7B"
}
