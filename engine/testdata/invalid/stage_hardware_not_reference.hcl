# hardware given as a string instead of a reference.
# want: 8:14 Invalid hardware argument
hardware "h" {
  profile = "nebius-h100-8"
}

stage "probe" "p" {
  hardware = "h"
}
