# A layer count that is not a whole number.
# want: 5:12 Invalid value for layers
model "m" {
  preset = "llama2-7b"
  layers = 32.5
}
