# A list where one preset name belongs.
# want: 4:12 Incorrect attribute value type
model "m" {
  preset = ["llama2-7b"]
}
