# A block whose closing brace is missing.
# want: 3:14 Unclosed configuration block
hardware "h" {
  profile = "nebius-h100-8"

model "m" {
  preset = "llama2-7b"
}
