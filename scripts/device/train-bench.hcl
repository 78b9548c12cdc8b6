# Throughput of gpuflow's trainer on the Llama-3.2-1B shape (16 layers,
# 2048 wide, vocab 128256, tied), sequences of 4096 tokens, FSDP2 with bf16
# compute (full sharding), torch.compile: one GPU, or data parallelism over several with
# the same work per GPU. scripts/device/train-all.sh plans and applies it
# (the plan's prediction beside what the run measured);
# scripts/device/train-plan.sh varies it (micro-batch, accumulation,
# sharding, recomputation, eager, tensor and pipeline parallelism) to
# check the plan against what each run measures.
#
#   gpuflow apply -var profile=h200-x1 -var gpus=1 -var data=PREFIX train-bench.hcl

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
  default = 4
}

variable "accumulation" {
  type        = number
  description = "Micro-batches per GPU per optimizer step."
  default     = 1
}

variable "fsdp" {
  type        = bool
  description = "Shard weights, gradients and optimizer states (FSDP); false replicates them (ZeRO 0)."
  default     = true
}

variable "recompute" {
  type    = string
  default = "none"
}

variable "tp" {
  type        = number
  description = "Tensor-parallel degree, with sequence parallelism above 1 (needs tied = false)."
  default     = 1
}

variable "pp" {
  type        = number
  description = "Pipeline stages (needs tied = false)."
  default     = 1
}

variable "vp" {
  type        = number
  description = "Model chunks per pipeline rank (interleaved 1F1B above 1)."
  default     = 1
}

variable "tied" {
  type        = bool
  description = "Tie the input and output embeddings, as Llama-3.2-1B does; the trainer splits untied ones only."
  default     = true
}

variable "framework" {
  type        = string
  description = "gpuflow (compiled) or gpuflow-eager (no torch.compile)."
  default     = "gpuflow"
}

variable "steps" {
  type    = number
  default = 30
}

variable "data" {
  type        = string
  description = "Megatron shards (a prefix, a folder or a glob) of token ids below 128256."
}

hardware "gpu" {
  profile = var.profile
}

model "llama1b" {
  preset          = "llama3.2-1b"
  seq_len         = 4096
  tied_embeddings = var.tied
}

layout "fsdp" {
  tp                = var.tp
  pp                = var.pp
  vp                = var.vp
  dp                = var.gpus / (var.tp * var.pp)
  sequence_parallel = var.tp > 1
  fsdp              = var.fsdp
  micro_batch       = var.micro_batch
  global_batch      = var.micro_batch * var.gpus / (var.tp * var.pp) * var.accumulation
  recompute         = var.recompute
}

stage "pretrain" "speed" {
  hardware  = hardware.gpu
  model     = model.llama1b
  layout    = layout.fsdp
  framework = var.framework

  data         = var.data
  steps        = var.steps
  lr           = 3e-4
  warmup_steps = 5
}
