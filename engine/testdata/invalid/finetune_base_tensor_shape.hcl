# A finetune whose base folder holds a tensor (by its safetensors header) of another shape than config.json implies.
# want: 29:14 Unusable base folder
# detail: has shape [32, 8], but config.json implies [16, 8]
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

stage "finetune" "lora" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
  data     = "data/shards"
  base     = "../../model/hf/testdata/folders/shape_contradicts"
  lr       = 2e-5
  steps    = 10

  lora {
    rank    = 4
    alpha   = 8
    targets = ["q_proj", "v_proj"]
  }
}
