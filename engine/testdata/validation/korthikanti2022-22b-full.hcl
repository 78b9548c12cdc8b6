# Source: Reducing Activation Recomputation in Large Transformer Models (Korthikanti et al., 2022), the 22B configuration on 8 GPUs (data parallel size 1): time per iteration with full recomputation.
# Published: 1.42 s per iteration.
# published_step_s = 1.4200
#
# Planned by TestPublishedScaling (engine/validation_test.go) as a new user
# would write it: the layout as published, the framework's options of the
# time (materialised attention, gradients reduced after the backward).

hardware "cluster" {
  profile = "dgx-a100-80gb"
  nodes   = 1
}

model "gpt" {
  layers          = 48
  hidden          = 6144
  ffn_hidden      = 24576
  heads           = 64
  vocab           = 51200
  seq_len         = 2048
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp                  = 8
  pp                  = 1
  dp                  = 1
  vp                  = 1
  micro_batch         = 4
  global_batch        = 4
  recompute           = "full"
  precision           = "bf16"
  attention           = "materialized"
  overlap_grad_reduce = false
}

stage "pretrain" "published" {
  hardware  = hardware.cluster
  model     = model.gpt
  layout    = layout.published
  framework = "megatron"
  data      = "data/corpus"
  steps     = 100
  lr        = 1e-4
}
