# Outputs referring to blocks, stages and namespaces that do not exist.
# want: 11:11 Reference to undeclared model block
# want: 15:11 Reference to undeclared stage
# want: 19:11 Unknown reference
# detail: Did you mean "model"?
model "m" {
  preset = "llama2-7b"
}

output "x" {
  value = model.nope.layers
}

output "y" {
  value = stage.probe.missing.outputs.x
}

output "z" {
  value = modle.m
}
