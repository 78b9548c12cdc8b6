# Loads a Hugging Face folder under a layout of CPU ranks, trains one step
# at a learning rate too small to move a weight, and exports it again:
# hf_check.py compares the export's logits with the folder's, and the
# step's loss with one rank's. scripts/device/hf-check.sh applies it.

variable "folder" { type = string }
variable "data" { type = string }
variable "out" { type = string }
variable "device" {
  type    = string
  default = "cpu"
}
variable "tp" {
  type    = number
  default = 1
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
  profile = "h200-x${var.tp * var.pp * var.dp}" # placement only: the ranks run on CPU cores
}

model "m" {
  from    = var.folder
  seq_len = 32
}

layout "l" {
  tp           = var.tp
  pp           = var.pp
  dp           = var.dp
  fsdp         = var.dp > 1
  micro_batch  = 1
  global_batch = 8 # the same batches under every layout
}

stage "pretrain" "load" {
  hardware = hardware.cpu
  model    = model.m
  layout   = layout.l
  device   = var.device
  data     = var.data
  init     = var.folder
  steps    = 1
  lr       = 1e-30
  export {
    hf = "${var.out}/hf"
  }
}
