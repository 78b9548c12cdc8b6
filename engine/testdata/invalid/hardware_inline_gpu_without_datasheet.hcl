# An inline GPU without its figures is told of the GPU catalogue.
# want: 6:3 Missing required argument
# detail: Or name a GPU datasheet, which sets it
hardware "h" {
  nodes = 1
  gpu {
    count      = 1
    memory_gib = 80
    hbm_tbps   = 3.35
    tflops {
      bf16 = 989
    }
  }
  interconnect {
    kind        = "none"
    domain_size = 1
  }
  network {
    kind = "none"
  }
}
