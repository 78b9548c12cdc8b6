# An auto layout with an objective gpuflow cannot optimise.
# want: 5:17 Invalid auto layout objective
layout "l" {
  auto {
    objective = "speed"
  }
}
