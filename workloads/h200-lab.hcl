# The whole pipeline in miniature, sized for the H200 virtual machines of
# the built-in profiles h200-x1, h200-x2 and h200-x4 to finish in minutes:
# accept the GPUs, tokenize a small English corpus, pre-train a
# ~110M-parameter Llama-shaped model for a few hundred steps, LoRA
# fine-tune the checkpoint it wrote, and evaluate both on the fine-tune
# text: the fine-tuned model must not do worse there than its base.
#
# Sources: acceptance marks are 90% of what plain PyTorch measured on 4x
# H200 (reference measurements, docs/references.md: 746 TFLOP/s bf16 and
# 1406 fp8 GEMM at 8192^3, 4.22 TB/s HBM copy, 394 GB/s P2P copy, all-reduce
# busbw 354 GB/s at 1 GiB). The text is English that every Debian and Ubuntu
# system ships: the packages' copyright files for pre-training (433 files,
# 11.8 MB on the H200 machines' Ubuntu 24.04 image; 723 files, 17.5 MB on a
# Debian 12 workstation; counted 2026-11-21), and the common licence texts
# for fine-tuning. The tokenizer is GPT-2's r50k_base, whose rank file the
# repository keeps as test data. The model widths are GPT-2 small's (12
# layers, 768 wide, 12 heads) in Llama form, chosen here.
#
#   gpuflow plan workloads/h200-lab.hcl
#   gpuflow apply -var profile=h200-x4 workloads/h200-lab.hcl

variable "profile" {
  type        = string
  description = "The H200 machine to run on: h200-x1, h200-x2 or h200-x4."
  default     = "h200-x1"

  validation {
    condition     = contains(["h200-x1", "h200-x2", "h200-x4"], var.profile)
    error_message = "profile must be h200-x1, h200-x2 or h200-x4."
  }
}

variable "corpus" {
  type        = string
  description = "Plain-text files to pre-train on, one document each; a glob."
  default     = "/usr/share/doc/*/copyright"
}

variable "finetune_text" {
  type        = string
  description = "Plain-text files to fine-tune on, one document each; a glob."
  default     = "/usr/share/common-licenses/*"
}

variable "tokenizer" {
  type        = string
  description = "A tiktoken rank file matching the model's vocabulary (relative paths start at this file's directory)."
  default     = "../plugins/dataprep/bpe/testdata/vocab/r50k_base.tiktoken.gz"
}

variable "pretrain_steps" {
  type        = number
  description = "Optimizer steps of the pre-train, 64 sequences of 1024 tokens each."
  default     = 300
}

locals {
  gpus = { "h200-x1" = 1, "h200-x2" = 2, "h200-x4" = 4 }[var.profile]
  more = local.gpus > 1

  # 90% of the reference measurements' PyTorch figures on 4x H200.
  accept = {
    bf16_tflops = 670
    fp8_tflops  = 1265
    hbm_tbps    = 3.8
    p2p_gbps    = 355
    busbw_gbps  = 320
  }
}

hardware "lab" {
  profile = var.profile
}

model "small" {
  layers          = 12
  hidden          = 768
  ffn_hidden      = 2048
  heads           = 12
  kv_heads        = 4
  vocab           = 50304 # r50k_base's 50257 tokens, padded to a multiple of 64
  seq_len         = 1024
  tied_embeddings = true
  activation      = "swiglu"
}

# The same 64 sequences per step on any of the three machines: fewer GPUs
# accumulate more micro-batches.
layout "data_parallel" {
  dp           = local.gpus
  micro_batch  = 16
  global_batch = 64
}

stage "benchmark" "acceptance" {
  hardware = hardware.lab

  health {}

  gemm {
    dtypes = ["bf16", "fp8"]
    sizes  = [8192]
    expect {
      min_tflops = { bf16 = local.accept.bf16_tflops, fp8 = local.accept.fp8_tflops }
    }
  }

  hbm {
    bytes = "4GiB"
    expect {
      min_tbps = local.accept.hbm_tbps
    }
  }

  # One GPU has no peer: p2p is skipped and the all-reduce has nothing to
  # move, so these marks apply only with two or more.
  p2p {
    bytes = "1GiB"
    expect {
      min_gbps = local.more ? local.accept.p2p_gbps : null
    }
  }

  nccl {
    ops       = ["all_reduce"]
    dtype     = "bf16"
    min_bytes = "1MiB"
    max_bytes = "1GiB"
    expect {
      min_busbw_gbps = local.more ? local.accept.busbw_gbps : null
    }
  }
}

stage "data_prep" "corpus" {
  inputs = [var.corpus]
  format = "text"

  tokenizer {
    type = "tiktoken"
    path = var.tokenizer
  }

  output_dir    = "data/lab"
  output_format = ["megatron"]
  # /usr/share/doc holds a few copyright files that are not UTF-8 (the
  # device image's nsight-compute one, for example): count and skip them.
  on_error = "skip"

  split {
    train = 0.95
    valid = 0.05
  }
  seed = 1
}

stage "data_prep" "finetune_text" {
  inputs = [var.finetune_text]
  format = "text"

  tokenizer {
    type = "tiktoken"
    path = var.tokenizer
  }

  output_dir = "data/lab-finetune"

  split {
    train = 0.9
    valid = 0.1
  }
}

stage "pretrain" "small" {
  depends_on = [stage.benchmark.acceptance]

  hardware = hardware.lab
  model    = model.small
  layout   = layout.data_parallel

  data             = stage.data_prep.corpus.outputs.train
  steps            = var.pretrain_steps
  lr               = 6e-4
  min_lr           = 6e-5
  warmup_steps     = 30
  weight_decay     = 0.1
  seed             = 1
  checkpoint_every = 100
  # The loss on the corpus's valid split every 25 steps and at the end.
  eval_every = 25
}

stage "finetune" "small_lora" {
  hardware = hardware.lab
  model    = model.small
  layout   = layout.data_parallel

  base = stage.pretrain.small.outputs.checkpoint
  data = stage.data_prep.finetune_text.outputs.train

  lora {
    rank    = 16
    alpha   = 32
    targets = ["q_proj", "k_proj", "v_proj", "o_proj"]
  }

  steps        = 100
  lr           = 1e-4
  warmup_steps = 10
  seed         = 1
  eval_every   = 25
}

# Loss and perplexity of the two models on the fine-tune text, the one the
# adapters were trained on. The fine-tuned model's gate is its base's loss:
# a fine-tune that does not lower it fails the workload.
stage "eval" "pretrained" {
  hardware = hardware.lab
  model    = model.small
  layout   = layout.data_parallel

  weights = stage.pretrain.small.outputs.checkpoint
  data    = stage.data_prep.finetune_text.outputs.train
}

stage "eval" "finetuned" {
  hardware = hardware.lab
  model    = model.small
  layout   = layout.data_parallel

  weights = stage.finetune.small_lora.outputs.checkpoint
  base    = stage.pretrain.small.outputs.checkpoint
  data    = stage.data_prep.finetune_text.outputs.train

  expect {
    max_valid_loss = stage.eval.pretrained.outputs.valid_loss
  }
}

output "gpus" {
  value = local.gpus
}

output "pretrain_checkpoint" {
  value = stage.pretrain.small.outputs.checkpoint
}

output "adapters" {
  value = stage.finetune.small_lora.outputs.checkpoint
}

output "finetune_text_loss" {
  value = {
    pretrained = stage.eval.pretrained.outputs.valid_loss
    finetuned  = stage.eval.finetuned.outputs.valid_loss
  }
}
