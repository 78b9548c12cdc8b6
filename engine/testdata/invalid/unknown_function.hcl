# A function that does not exist.
# want: 4:8 Call to unknown function
locals {
  tp = maximum(2, 4)
}
