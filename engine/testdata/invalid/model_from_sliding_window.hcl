# A sequence longer than Mistral's sliding window.
# want: 6:13 Sequence longer than the sliding window
# detail: Set seq_len to at most 32.
model "m" {
  from    = "../../model/hf/testdata/folders/mistral_window"
  seq_len = 64
}
