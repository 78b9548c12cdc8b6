# A model block with two sources of its shape.
# want: 5:12 Two model sources
model "m" {
  from   = "../../model/hf/testdata/folders/single"
  preset = "llama2-7b"
}
