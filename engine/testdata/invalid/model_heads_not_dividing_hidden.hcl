# A hidden size that does not split over the attention heads.
# want: 6:12 Invalid model shape
# want: 6:12 Invalid model shape
model "m" {
  preset = "llama2-7b"
  heads  = 30
}
