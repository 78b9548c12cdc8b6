# A number far beyond any integer.
# want: 5:12 Invalid value for layers
model "m" {
  preset = "llama2-7b"
  layers = 1e400
}
