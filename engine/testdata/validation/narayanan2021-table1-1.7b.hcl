# Source: Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM (Narayanan et al., 2021), Table 1, the 1.7B row: 137 TFLOP/s per GPU on 32 GPUs; layout from Megatron-LM examples/sc21/run_table_1.sh.
# Published: 137 TFLOP/s per GPU, counted by the paper's equation 3 (full recomputation included): step 3.528 s.
# published_step_s = 3.5280
#
# Planned by TestPublishedScaling (engine/validation_test.go) as a new user
# would write it: the layout as published, the framework's options of the
# time (materialised attention, torch DDP overlapping,
# gradients accumulated outside the weight-gradient product, the input
# gradients' TP all-reduce waited on before the weight-gradient product).

hardware "cluster" {
  profile = "dgx-a100-80gb"
  nodes   = 4
}

model "gpt" {
  layers          = 24
  hidden          = 2304
  ffn_hidden      = 9216
  heads           = 24
  vocab           = 51200
  seq_len         = 2048
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp                       = 1
  pp                       = 1
  dp                       = 32
  vp                       = 1
  micro_batch              = 16
  global_batch             = 512
  recompute                = "full"
  precision                = "fp16"
  attention                = "materialized"
  grad_reduce_dtype        = "fp16"
  overlap_grad_reduce      = true
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
