# An index that names a shard the folder does not have.
# want: 5:10 Unusable model folder
# detail: names model-00002-of-00002.safetensors, which is not in
model "m" {
  from = "../../model/hf/testdata/folders/absent_file"
}
