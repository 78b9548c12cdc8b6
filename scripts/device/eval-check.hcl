# A transformers-made random Llama evaluated by gpuflow on one GPU: loss
# and perplexity on shards of English text, multiple-choice scores and
# greedy completions, which eval_check.py compares with transformers' own
# on the same tokens. scripts/device/eval-check.sh applies it.

variable "folder" { type = string }
variable "text" { type = string }
variable "tokenizer" { type = string }
variable "questions" { type = string }
variable "prompts" { type = string }

hardware "gpu" {
  profile = "h100-x1"
}

model "m" {
  from    = var.folder
  seq_len = 256
}

layout "one" {
  dp           = 1
  micro_batch  = 8
  global_batch = 8
}

stage "data_prep" "text" {
  inputs = [var.text]
  format = "text"

  tokenizer {
    type = "tiktoken"
    path = var.tokenizer
  }

  output_dir = "data"

  split {
    train = 1
  }
}

stage "eval" "random" {
  hardware = hardware.gpu
  model    = model.m
  layout   = layout.one

  weights = var.folder
  data    = stage.data_prep.text.outputs.train
  tokens  = 262144

  tokenizer {
    type = "tiktoken"
    path = var.tokenizer
  }

  multiple_choice {
    path = var.questions
  }

  generate {
    prompts        = var.prompts
    max_new_tokens = 16
  }
}
