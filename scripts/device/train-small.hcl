# gpuflow's trainer on workloads/h200-lab.hcl's model (12 layers, 768
# wide, 12 heads, 4 key/value heads, vocab 50304, 1024 tokens, tied): a
# model small enough that the host, not the GPU, sets the pace.
# scripts/device/train-plan.sh plans and applies it (runs H and R).
#
#   gpuflow apply -var profile=h200-x1 -var gpus=1 -var data=PREFIX train-small.hcl

variable "profile" {
  type    = string
  default = "h200-x1"
}

variable "gpus" {
  type    = number
  default = 1
}

variable "micro_batch" {
  type    = number
  default = 8
}

variable "accumulation" {
  type        = number
  description = "Micro-batches per GPU per optimizer step."
  default     = 4
}

variable "tp" {
  type        = number
  description = "Tensor-parallel degree, with sequence parallelism above 1 (needs tied = false)."
  default     = 1
}

variable "tied" {
  type        = bool
  description = "Tie the input and output embeddings; the trainer splits untied ones only."
  default     = true
}

variable "steps" {
  type    = number
  default = 60
}

variable "data" {
  type        = string
  description = "Megatron shards (a prefix, a folder or a glob) of token ids below 50304."
}

hardware "gpu" {
  profile = var.profile
}

model "small" {
  layers          = 12
  hidden          = 768
  ffn_hidden      = 2048
  heads           = 12
  kv_heads        = 4
  vocab           = 50304
  seq_len         = 1024
  tied_embeddings = var.tied
  activation      = "swiglu"
}

layout "replicated" {
  tp                = var.tp
  dp                = var.gpus / var.tp
  sequence_parallel = var.tp > 1
  micro_batch       = var.micro_batch
  global_batch      = var.micro_batch * var.gpus / var.tp * var.accumulation
}

stage "pretrain" "small" {
  hardware = hardware.gpu
  model    = model.small
  layout   = layout.replicated

  data         = var.data
  steps        = var.steps
  lr           = 6e-4
  warmup_steps = 5
}
