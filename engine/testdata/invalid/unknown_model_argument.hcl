# A misspelled model argument.
# want: 6:3 Unsupported argument
# detail: Did you mean "layers"?
model "m" {
  preset = "llama2-7b"
  layer  = 32
}
