# A finetune whose base folder stores its weights in a type the trainer does not read.
# want: 29:14 Unusable base folder
# detail: is stored as F64; the trainer reads BF16, F16 and F32
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
  base     = "../../model/hf/testdata/folders/tensor_dtype"
  lr       = 2e-5
  steps    = 10

  lora {
    rank    = 4
    alpha   = 8
    targets = ["q_proj", "v_proj"]
  }
}
