# A finetune exporting its whole model without merging the adapters into it.
# want: 34:10 Exporting the whole model needs merge = true
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  tp           = 2
  dp           = 4
  micro_batch  = 1
  global_batch = 8
}

stage "finetune" "lora" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
  data     = "data/shards"
  base     = "models/llama"
  lr       = 2e-5
  steps    = 100

  lora {
    rank    = 64
    alpha   = 128
    targets = ["q_proj", "v_proj"]
  }

  export {
    hf = "exports/merged"
  }
}
