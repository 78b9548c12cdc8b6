# A stage that waits for itself.
# want: 4:1 Dependency cycle between stages
# detail: stage.probe.a -> stage.probe.a
stage "probe" "a" {
  depends_on = [stage.probe.a]
}
