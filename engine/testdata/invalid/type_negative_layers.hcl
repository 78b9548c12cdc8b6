# A negative layer count.
# want: 5:12 Invalid model shape
model "m" {
  preset = "llama2-7b"
  layers = -32
}
