# A stage type no plugin serves.
# want: 4:7 Unknown stage type
# detail: Did you mean "pretrain"?
stage "pretrian" "main" {
  lr = 1e-4
}
