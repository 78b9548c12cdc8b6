# Stages that read each other's outputs.
# want: 4:1 Dependency cycle between stages
# detail: stage.probe.a -> stage.probe.b -> stage.probe.a
stage "probe" "a" {
  input = stage.probe.b.outputs.x
}

stage "probe" "b" {
  input = stage.probe.a.outputs.x
}
