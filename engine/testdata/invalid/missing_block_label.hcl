# A model block without its name.
# want: 3:7 Missing name for model
model {
  preset = "llama2-7b"
}
