# Through the Hugging Face format and back: pre-train a small Llama on CPU
# ranks and export it, fine-tune the export with LoRA, export the adapters
# and the merged model. hf_check.py checks the last two against PEFT.

variable "data" { type = string }

hardware "cpu" {
  profile = "h200-x2" # placement only: the ranks run on CPU cores
}

model "tiny" {
  layers     = 2
  hidden     = 64
  ffn_hidden = 160
  heads      = 4
  kv_heads   = 2
  vocab      = 256
  seq_len    = 32
}

layout "dp2" {
  dp           = 2
  fsdp         = true
  micro_batch  = 1
  global_batch = 4
}

stage "pretrain" "scratch" {
  hardware = hardware.cpu
  model    = model.tiny
  layout   = layout.dp2
  device   = "cpu"
  data     = var.data
  steps    = 5
  lr       = 1e-3
  export {
    hf = "out/scratch"
  }
}

stage "finetune" "tune" {
  hardware = hardware.cpu
  model    = model.tiny
  layout   = layout.dp2
  device   = "cpu"
  data     = var.data
  base     = stage.pretrain.scratch.outputs.hf
  steps    = 3
  lr       = 1e-2
  merge    = true
  lora {
    rank    = 4
    alpha   = 8
    targets = ["q_proj", "v_proj"]
  }
  export {
    peft = "out/tune-peft"
    hf   = "out/tune-merged"
  }
}
