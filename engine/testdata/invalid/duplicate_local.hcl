# One local name in two locals blocks.
# want: 9:3 Duplicate local value
# detail: was already defined at
locals {
  tp = 2
}

locals {
  tp = 4
}
