# An argument written without "=".
# want: 4:21 Invalid block definition
model "m" {
  preset "llama2-7b"
}
