# A hardware profile that does not exist.
# want: 5:13 Unknown hardware profile
# detail: Did you mean "nebius-h100-8"?
hardware "h" {
  profile = "nebius-h100"
}
