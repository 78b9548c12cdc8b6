# A tensor whose shape (read from the safetensors header) contradicts config.json.
# want: 5:10 Unusable model folder
# detail: has shape [32, 8], but config.json implies [16, 8].
model "m" {
  from = "../../model/hf/testdata/folders/shape_contradicts"
}
