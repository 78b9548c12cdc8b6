# A function called with the wrong kind of argument.
# want: 4:13 Invalid function argument
locals {
  tp = max("two", 4)
}
