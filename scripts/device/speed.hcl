# One-GPU speed of gpuflow's trainer on a Llama-shaped model (or a GPT-2
# one, activation = "gelu"), bf16, fp16 or fp8:
# the Llama-3.2-1B shape by default, or a wider one (hidden 4096, ffn
# 14336, as Llama 3 8B, with as many layers as fit one H200) to weigh fp8
# against bf16. scripts/device/speed.sh plans and applies it.
#
#   gpuflow apply -var data=PREFIX -var precision=fp8 -var hidden=4096 ... speed.hcl

variable "data" {
  type        = string
  description = "Megatron shards (a prefix, a folder or a glob) of token ids below 128256."
}

variable "layers" {
  type    = number
  default = 16
}

variable "hidden" {
  type    = number
  default = 2048
}

variable "ffn_hidden" {
  type    = number
  default = 8192
}

variable "heads" {
  type    = number
  default = 32
}

variable "kv_heads" {
  type    = number
  default = 8
}

variable "tied" {
  type    = bool
  default = true
}

variable "activation" {
  type        = string
  description = "swiglu (Llama) or gelu (GPT-2: LayerNorm, learned positions, biases; kv_heads = heads)."
  default     = "swiglu"
}

variable "precision" {
  type    = string
  default = "bf16"
}

variable "micro_batch" {
  type    = number
  default = 4
}

variable "fsdp" {
  type        = bool
  description = "FSDP2 frees each layer's gathered weights after its forward and gathers them again for its backward; false keeps them (ZeRO 0)."
  default     = true
}

variable "recompute" {
  type    = string
  default = "none"
}

variable "steps" {
  type    = number
  default = 30
}

variable "seed" {
  type        = number
  description = "Seed of the initial weights and the data order: another seed gives the loss curves' run-to-run spread."
  default     = 1
}

variable "vocab" {
  type    = number
  default = 128256
}

variable "seq_len" {
  type    = number
  default = 4096
}

variable "global_batch" {
  type        = number
  description = "Sequences a step; 0 takes one micro-batch."
  default     = 0
}

variable "framework" {
  type        = string
  description = "gpuflow (compiled) or gpuflow-eager (no torch.compile)."
  default     = "gpuflow"
}

variable "lr" {
  type    = number
  default = 3e-4
}

variable "warmup" {
  type        = number
  description = "Warm-up steps of the learning rate."
  default     = 5
}

variable "hardware" {
  type        = string
  description = "The one-GPU profile: h200-x1 or h100-x1."
  default     = "h200-x1"
}

hardware "gpu" {
  profile = var.hardware
}

model "llama" {
  layers          = var.layers
  hidden          = var.hidden
  ffn_hidden      = var.ffn_hidden
  heads           = var.heads
  kv_heads        = var.kv_heads
  vocab           = var.vocab
  seq_len         = var.seq_len
  tied_embeddings = var.tied
  activation      = var.activation
}

layout "one" {
  dp           = 1
  fsdp         = var.fsdp
  micro_batch  = var.micro_batch
  global_batch = var.global_batch == 0 ? var.micro_batch : var.global_batch
  recompute    = var.recompute
  precision    = var.precision
}

stage "pretrain" "speed" {
  hardware  = hardware.gpu
  model     = model.llama
  layout    = layout.one
  framework = var.framework

  data         = var.data
  steps        = var.steps
  lr           = var.lr
  warmup_steps = var.warmup
  seed         = var.seed
}
