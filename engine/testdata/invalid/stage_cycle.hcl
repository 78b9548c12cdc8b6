# Stages that wait for each other through depends_on.
# want: 4:1 Dependency cycle between stages
# detail: stage.probe.a -> stage.probe.c -> stage.probe.b -> stage.probe.a
stage "probe" "a" {
  depends_on = [stage.probe.c]
}

stage "probe" "b" {
  depends_on = [stage.probe.a]
}

stage "probe" "c" {
  depends_on = [stage.probe.b]
}
