# A path that is not a Hugging Face folder.
# want: 5:10 Unusable model folder
# detail: has no config.json, so it is not a Hugging Face model folder.
model "m" {
  from = "../../model/hf/testdata/folders/absent"
}
