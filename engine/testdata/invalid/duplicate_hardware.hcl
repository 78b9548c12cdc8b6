# Two hardware blocks with one name.
# want: 8:1 Duplicate hardware block
# detail: was already declared at
hardware "h" {
  profile = "nebius-h100-8"
}

hardware "h" {
  profile = "hgx-h200-8"
}
