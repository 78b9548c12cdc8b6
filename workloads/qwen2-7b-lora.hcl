# LoRA fine-tune of Qwen2-7B-Instruct for function calling on 8x H100, as
# the reference exercise does: render the Glaive function-calling records
# through the model's own chat template, tokenize them with a loss mask on
# the assistant's replies, and train rank-64 adapters on the attention
# projections with plain data parallelism.
#
# Source: "Nebius H100 GPU Cluster - Complete Technical Guide" (docs/references.md)
#   - 5.2 and 6 (training script and training_config.yaml): LoRA r 64,
#     alpha 128, dropout 0.05 on q/k/v/o projections; batch 2 per GPU,
#     4 accumulation steps (64 sequences per step on 8 GPUs); lr 2e-5,
#     10 warm-up steps, 100 steps; bf16; gradient checkpointing; sequences
#     up to 4096 tokens; dataset glaiveai/glaive-function-calling-v2;
#   - 6.3: the Glaive records, here as chat messages (system with the
#     function schemas, user, the assistant's <functioncall>, the function's
#     response, the answer).
# "Nebius H100 16-GPU Multi-Node Benchmark" (docs/references.md): the
# cosine schedule, and the same recipe on 2 nodes (set -var nodes=2: 128
# sequences per step).
#
#   gpuflow plan workloads/qwen2-7b-lora.hcl
#   gpuflow plan -var nodes=2 workloads/qwen2-7b-lora.hcl
#
# Without the model and the dataset at hand, stand-ins run the data prep
# here: Qwen2.5's tokenizer files (Qwen2's vocabulary; its template is
# Qwen2's ChatML with tools) and a Glaive-shaped sample:
#   scripts/tokenizer/fetch.sh qwen2_5 workloads/tokenizers/qwen2_5
#   go run ./scripts/glaive-sample -out workloads/data/raw/glaive-function-calling-v2
#   gpuflow apply -target data_prep.glaive -var base_model=tokenizers/qwen2_5 workloads/qwen2-7b-lora.hcl

variable "nodes" {
  type        = number
  description = "Nebius 8x H100 nodes to train on."
  default     = 1

  validation {
    condition     = var.nodes >= 1 && floor(var.nodes) == var.nodes
    error_message = "nodes must be a whole number of at least 1."
  }
}

variable "base_model" {
  type        = string
  description = "Local copy of Qwen/Qwen2-7B-Instruct (a Hugging Face folder: config.json, safetensors, tokenizer files)."
  default     = "models/Qwen2-7B-Instruct"
}

variable "glaive" {
  type        = string
  description = "glaive-function-calling-v2 as JSONL chat records (OpenAI-style messages, or ShareGPT conversations); a glob."
  default     = "data/raw/glaive-function-calling-v2/*.jsonl"
}

locals {
  gpus              = var.nodes * 8
  micro_batch       = 2
  grad_accumulation = 4
}

hardware "h100" {
  profile = "nebius-h100-8"
  nodes   = var.nodes
}

# The preset is Qwen2-7B's shape, so the workload plans without the model
# at hand; with the folder there, from = var.base_model reads the shape
# from its config.json instead. The trainer takes the rotary base, norm
# epsilon and q/k/v biases from the base folder's config.json either way.
model "qwen2" {
  preset  = "qwen2-7b"
  seq_len = 4096 # the recipe's maximum; Qwen2-7B itself was trained to 32768
}

layout "ddp" {
  dp           = local.gpus
  micro_batch  = local.micro_batch
  global_batch = local.micro_batch * local.grad_accumulation * local.gpus
  recompute    = "full" # gradient checkpointing of whole layers
  precision    = "bf16"
}

stage "data_prep" "glaive" {
  inputs = [var.glaive]
  # Each record rendered by the chat template of the model's
  # tokenizer_config.json, the loss on the assistant's turns only.
  format   = "chat"
  train_on = "assistant"

  tokenizer {
    type = "hf"
    path = "${var.base_model}/tokenizer.json"
    eos  = "<|endoftext|>" # between packed conversations, as Qwen2 separates documents
  }

  output_dir    = "data/glaive"
  output_format = ["megatron"] # the trainer reads Megatron shards

  split {
    train = 0.99
    valid = 0.01
  }
}

stage "finetune" "function_calling" {
  hardware = hardware.h100
  model    = model.qwen2
  layout   = layout.ddp
  # Sized as the reference runs it, with Hugging Face Trainer and PEFT:
  # this stage plans only; apply refuses it, as it runs gpuflow's trainer.
  framework = "pytorch-eager"

  base = var.base_model
  data = stage.data_prep.glaive.outputs.train

  lora {
    rank    = 64
    alpha   = 128
    dropout = 0.05
    targets = ["q_proj", "k_proj", "v_proj", "o_proj"]
  }

  steps        = 100
  lr           = 2e-5
  schedule     = "cosine"
  warmup_steps = 10

  # The adapters as PEFT loads them onto Qwen2-7B-Instruct.
  export {
    peft = "exports/qwen2-7b-function-calling"
  }
}

output "adapters" {
  description = "The trained LoRA adapters, a PEFT folder."
  value       = stage.finetune.function_calling.outputs.peft
}
