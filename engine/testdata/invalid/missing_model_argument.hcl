# An inline model shape without its layer count.
# want: 3:1 Missing model argument
model "m" {
  hidden     = 4096
  ffn_hidden = 11008
  heads      = 32
  vocab      = 32000
  seq_len    = 4096
}
