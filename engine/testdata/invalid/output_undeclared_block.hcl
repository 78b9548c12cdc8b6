# Outputs referring to blocks, stages and namespaces that do not exist.
# want: 10:11 Reference to undeclared model block
# want: 14:11 Reference to undeclared stage
# want: 18:11 Unknown reference
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
