# LoRA on a Hugging Face folder under a layout of CPU ranks, exported as a
# PEFT folder and as the merged model: hf_check.py loads the adapters with
# PEFT on the folder and compares them with the merged export.

variable "folder" { type = string }
variable "data" { type = string }
variable "out" { type = string }
variable "device" {
  type    = string
  default = "cpu"
}
variable "pp" {
  type    = number
  default = 1
}
variable "dp" {
  type    = number
  default = 1
}

hardware "cpu" {
  profile = "h200-x${var.pp * var.dp}" # placement only: the ranks run on CPU cores
}

model "m" {
  from    = var.folder
  seq_len = 32
}

layout "l" {
  pp           = var.pp
  dp           = var.dp
  fsdp         = var.dp > 1
  micro_batch  = 1
  global_batch = 8 # the same batches under every layout
}

stage "finetune" "lora" {
  hardware = hardware.cpu
  model    = model.m
  layout   = layout.l
  device   = var.device
  data     = var.data
  base     = var.folder
  steps    = 3
  lr       = 1e-2
  merge    = true
  lora {
    rank    = 4
    alpha   = 8
    targets = ["q_proj", "k_proj", "v_proj", "o_proj"]
  }
  export {
    peft = "${var.out}/peft"
    hf   = "${var.out}/merged"
  }
}
