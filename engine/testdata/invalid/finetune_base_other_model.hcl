# A finetune whose base folder is a whole other model than the stage's.
# want: 24:14 Unusable base folder
# detail: num_hidden_layers = 1 where the model has layers = 32
hardware "h" {
  profile = "h100-x1"
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  dp           = 1
  micro_batch  = 1
  global_batch = 1
  recompute    = "full"
}

stage "finetune" "lora" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
  data     = "data/shards"
  base     = "../../model/hf/testdata/folders/single"
  lr       = 2e-5
  steps    = 10

  lora {
    rank    = 4
    alpha   = 8
    targets = ["q_proj", "v_proj"]
  }
}
