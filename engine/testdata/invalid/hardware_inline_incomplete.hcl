# Inline hardware without the GPU block.
# want: 5:14 Missing gpu block
# want: 5:14 Missing interconnect block
# want: 5:14 Missing network block
hardware "h" {
  nodes = 1
}
