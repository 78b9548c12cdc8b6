# The LoRA fine-tune of qwen2-7b-lora.hcl on one H200, run by gpuflow's own
# trainer: Glaive-shaped function-calling records rendered through Qwen2's
# chat format and tokenized with Qwen2's tokenizer, rank-64 adapters on the
# attention projections of Qwen2-7B-Instruct, exported as a PEFT folder.
# The recipe is the reference exercise's (qwen2-7b-lora.hcl says where each
# figure comes from); the layout is the one the plan finds fastest for one
# H200 at the recipe's 8 sequences of 4096 tokens per step.
#
#   scripts/tokenizer/fetch.sh qwen2_5 models/Qwen2-7B-Instruct   # if the folder lacks them
#   python3 scripts/data/glaive_records.py workloads/data/raw/glaive/records.jsonl
#   gpuflow plan workloads/qwen2-7b-lora-h200.hcl
#   gpuflow apply workloads/qwen2-7b-lora-h200.hcl

variable "base_model" {
  type        = string
  description = "Local copy of Qwen/Qwen2-7B-Instruct (a Hugging Face folder: config.json, safetensors, tokenizer files)."
  default     = "models/Qwen2-7B-Instruct"
}

variable "records" {
  type        = string
  description = "Function-calling records as JSONL with instruction, input and output fields; a glob."
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
  format = "template"

  # Qwen2's chat format (ChatML), one record per training document.
  template = <<-EOT
    <|im_start|>system
    {{.instruction}}<|im_end|>
    <|im_start|>user
    {{.input}}<|im_end|>
    <|im_start|>assistant
    {{.output}}<|im_end|>
  EOT

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
