# depends_on naming a hardware block instead of a stage.
# want: 8:17 Invalid depends_on reference
hardware "h" {
  profile = "nebius-h100-8"
}

stage "probe" "p" {
  depends_on = [hardware.h]
}
