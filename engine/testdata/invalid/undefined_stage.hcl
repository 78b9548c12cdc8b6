# A stage reading the outputs of a stage nobody declared.
# want: 9:11 Reference to undeclared stage
# detail: Did you mean "probe.prep"?
stage "probe" "prep" {
  count = 1
}

stage "probe" "p" {
  input = stage.probe.perp.outputs.train
}
