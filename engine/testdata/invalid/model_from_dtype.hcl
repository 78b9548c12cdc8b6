# Weights stored in a type the trainer does not read.
# want: 5:10 Unusable model folder
# detail: is stored as F64; the trainer reads BF16, F16 and F32.
model "m" {
  from = "../../model/hf/testdata/folders/tensor_dtype"
}
