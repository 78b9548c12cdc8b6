# Two auto blocks in one layout.
# want: 7:3 Duplicate auto block
layout "l" {
  auto {
    objective = "cost"
  }
  auto {
    objective = "throughput"
  }
}
