# Source: Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM (Narayanan et al., 2021), Table 1, the 1T row: 163 TFLOP/s per GPU on 3072 GPUs; layout from Megatron-LM examples/sc21/run_table_1.sh.
# Published: 163 TFLOP/s per GPU, counted by the paper's equation 3 (full recomputation included): step 102.630 s.
# published_step_s = 102.6300
#
# Planned by TestPublishedScaling (engine/validation_test.go) as a new user
# would write it: the layout as published, the framework's options of the
# time (materialised attention, gradients reduced after the backward,
# gradients accumulated outside the weight-gradient product, the input
# gradients' TP all-reduce waited on before the weight-gradient product).

hardware "cluster" {
  profile = "dgx-a100-80gb"
  nodes   = 384
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
  tp                       = 8
  pp                       = 64
  dp                       = 6
  vp                       = 1
  micro_batch              = 1
  global_batch             = 3072
  recompute                = "full"
  precision                = "fp16"
  attention                = "materialized"
  grad_reduce_dtype        = "fp16"
  overlap_grad_reduce      = false
  grad_accumulation_fusion = false
  async_tp_allreduce       = false
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
