# Source: Reducing Activation Recomputation in Large Transformer Models (Korthikanti et al., 2022), the 1T configuration on 512 GPUs (data parallel size 1): time per iteration with sequence parallelism and selective recomputation.
# Published: 71.49 s per iteration.
# published_step_s = 71.4900
#
# Planned by TestPublishedScaling (engine/validation_test.go) as a new user
# would write it: the layout as published, the framework's options of the
# time (materialised attention, gradients reduced after the backward).

hardware "cluster" {
  profile = "dgx-a100-80gb"
  nodes   = 64
}

model "gpt" {
  layers          = 128
  hidden          = 25600
  ffn_hidden      = 102400
  heads           = 160
  vocab           = 51200
  seq_len         = 2048
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp                  = 8
  pp                  = 64
  dp                  = 1
  vp                  = 1
  micro_batch         = 1
  global_batch        = 512
  recompute           = "selective"
  precision           = "bf16"
  sequence_parallel   = true
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
