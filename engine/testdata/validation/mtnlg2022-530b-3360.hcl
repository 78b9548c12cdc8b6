# Source: Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B (Smith et al., 2022), section 2.4: global batch 1920 on 420 DGX A100 nodes (3360 GPUs), tensor 8, pipeline 35, data 12.
# Published: 44.4 s per iteration (113 TFLOP/s per GPU).
# published_step_s = 44.4000
#
# Planned by TestPublishedScaling (engine/validation_test.go) as a new user
# would write it: the layout as published, the framework's options of the
# time (materialised attention, gradients reduced after the backward,
# gradients accumulated outside the weight-gradient product, the input
# gradients' TP all-reduce waited on before the weight-gradient product,
# the pipeline's gradient sends whole, as DeepSpeed's pipeline engine sent
# them before v0.5.4, released October 6, 2021; the model was announced in
# October 2021).

hardware "cluster" {
  profile = "dgx-a100-80gb"
  nodes   = 420
}

model "gpt" {
  layers          = 105
  hidden          = 20480
  ffn_hidden      = 81920
  heads           = 128
  vocab           = 50272
  seq_len         = 2048
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp                       = 8
  pp                       = 35
  dp                       = 12
  vp                       = 1
  micro_batch              = 1
  global_batch             = 1920
  recompute                = "full"
  precision                = "bf16"
  attention                = "materialized"
  overlap_grad_reduce      = false
  grad_accumulation_fusion = false
  async_tp_allreduce       = false
  scatter_gather_grads     = false
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
