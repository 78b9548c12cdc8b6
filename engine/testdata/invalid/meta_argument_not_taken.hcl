# A meta-argument set on a stage whose type does not take it.
# want: 9:3 Unsupported argument
# detail: stage type "note" takes no hardware
hardware "h" {
  profile = "h100-x1"
}

stage "note" "n" {
  hardware = hardware.h
  text     = "hello"
}
