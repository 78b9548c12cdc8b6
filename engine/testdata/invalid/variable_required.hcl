# A variable with no default and no value given.
# want: 3:1 No value for required variable
variable "nodes" {
  type = number
}
