# An output that says nothing.
# want: 3:21 Missing required argument
output "checkpoint" {
  description = "where the weights go"
}
