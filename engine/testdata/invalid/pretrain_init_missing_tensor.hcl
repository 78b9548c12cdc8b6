# A pretrain continuing from a folder whose shards lack a tensor the architecture needs.
# want: 29:14 Unusable init folder
# detail: no safetensors file holds model.layers.0.mlp.down_proj.weight
hardware "h" {
  profile = "h100-x1"
}

model "m" {
  layers     = 1
  hidden     = 8
  ffn_hidden = 16
  heads      = 2
  kv_heads   = 1
  vocab      = 16
  seq_len    = 32
}

layout "l" {
  dp           = 1
  micro_batch  = 1
  global_batch = 1
}

stage "pretrain" "more" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
  data     = "data/shards"
  init     = "../../model/hf/testdata/folders/missing_tensor"
  lr       = 1e-4
  steps    = 10
}
