# A stage running on hardware nobody declared.
# want: 9:14 Reference to undeclared hardware block
# detail: Did you mean "cluster"?
hardware "cluster" {
  profile = "nebius-h100-8"
}

stage "probe" "p" {
  hardware = hardware.clustr
}
