# A reference to a variable nobody declared.
# want: 9:18 Reference to undeclared input variable
# detail: Did you mean "tp"?
variable "tp" {
  default = 2
}

layout "l" {
  tp           = var.tpp
  dp           = 4
  micro_batch  = 1
  global_batch = 8
}
