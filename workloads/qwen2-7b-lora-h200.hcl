# The LoRA fine-tune of qwen2-7b-lora.hcl on one H200, run by gpuflow's own
# trainer: Glaive-shaped function-calling conversations rendered by Qwen2's
# chat template and tokenized with Qwen2's tokenizer, the loss on the
# assistant's tokens only, rank-64 adapters on the attention projections of
# Qwen2-7B-Instruct, exported as a PEFT folder.
# The recipe is the reference exercise's (qwen2-7b-lora.hcl says where each
# figure comes from); the layout is the one the plan finds fastest for one
# H200 at the recipe's 8 sequences of 4096 tokens per step.
#
#   scripts/tokenizer/fetch.sh qwen2_5 models/Qwen2-7B-Instruct   # if the folder lacks them
#   python3 scripts/data/glaive_records.py --shape chat workloads/data/raw/glaive/records.jsonl
#   gpuflow plan workloads/qwen2-7b-lora-h200.hcl
#   gpuflow apply workloads/qwen2-7b-lora-h200.hcl

variable "base_model" {
  type        = string
  description = "Local copy of Qwen/Qwen2-7B-Instruct (a Hugging Face folder: config.json, safetensors, tokenizer files)."
  default     = "models/Qwen2-7B-Instruct"
}

variable "records" {
  type        = string
  description = "Function-calling conversations as JSONL, one per line: messages (OpenAI-style, with tool_calls) and tools; a glob."
  default     = "data/raw/glaive/*.jsonl"
}

variable "steps" {
  type        = number
  description = "Optimizer steps of 8 sequences."
  default     = 100
}

hardware "h200" {
  profile = "h200-x1"
}

# The preset is Qwen2-7B's shape, so the workload plans without the model
# at hand; the trainer takes the rotary base, norm epsilon and q/k/v
# biases from the base folder's config.json.
model "qwen2" {
  preset  = "qwen2-7b"
  seq_len = 4096
}

# The recipe's batch (2 sequences x 4 accumulation steps); the plan
# chooses the micro-batch and the recomputation for the GPU.
layout "one_gpu" {
  global_batch = 8
  precision    = "bf16"
  auto {}
}

stage "data_prep" "glaive" {
  inputs = [var.records]

  # Each conversation rendered by Qwen2's own chat template (the one in
  # tokenizer_config.json beside the tokenizer), the function schemas as
  # its tools; the loss counts the assistant's tokens only.
  format   = "chat"
  train_on = "assistant"

  tokenizer {
    type = "hf"
    path = "${var.base_model}/tokenizer.json"
  }

  output_dir    = "data/glaive"
  output_format = ["megatron"]
}

stage "finetune" "function_calling" {
  hardware = hardware.h200
  model    = model.qwen2
  layout   = layout.one_gpu

  base = var.base_model
  data = stage.data_prep.glaive.outputs.train

  lora {
    rank    = 64
    alpha   = 128
    dropout = 0.05
    targets = ["q_proj", "k_proj", "v_proj", "o_proj"]
  }

  steps        = var.steps
  lr           = 2e-5
  schedule     = "cosine"
  warmup_steps = 10

  export {
    peft = "exports/qwen2-7b-function-calling"
  }
}

output "adapters" {
  description = "The trained LoRA adapters, a PEFT folder."
  value       = stage.finetune.function_calling.outputs.peft
}
