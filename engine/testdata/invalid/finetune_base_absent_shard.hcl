# A finetune whose base folder's index names a shard the folder does not have.
# want: 29:14 Unusable base folder
# detail: names model-00002-of-00002.safetensors, which is not in
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
  base     = "../../model/hf/testdata/folders/absent_file"
  lr       = 2e-5
  steps    = 10

  lora {
    rank    = 4
    alpha   = 8
    targets = ["q_proj", "v_proj"]
  }
}
