# Source: MosaicML LLM Foundry, "MPT Training Benchmarks" (scripts/train/benchmarking/README.md), table "H100 80GB BF16": MPT-30b, sequence 2048, 16 GPUs, micro-batch 10, gradient accumulation 3, global batch 480, amp_bf16, FSDP mixed precision DEFAULT (fp32 reduction), FULL_SHARD, activation checkpointing True.
# Published: 2263 tokens/s per GPU: step 27.1498 s.
# published_step_s = 27.1498
#
# Planned by TestPublishedFSDP (engine/validation_test.go) as a new user
# would write it: the MPT shape (LayerNorm, GELU, one fused qkv product,
# tied embeddings; its learned positions are left out), FULL_SHARD as
# fsdp on 16 GPUs, activation checkpointing as full recomputation.

hardware "cluster" {
  profile = "dgx-h100"
  nodes   = 2
}

model "mpt" {
  layers          = 48
  hidden          = 7168
  ffn_hidden      = 28672
  heads           = 64
  vocab           = 50368
  seq_len         = 2048
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp           = 1
  pp           = 1
  dp           = 16
  fsdp         = true
  micro_batch  = 10
  global_batch = 480
  recompute    = "full"
  precision    = "bf16"
}

stage "pretrain" "published" {
  hardware  = hardware.cluster
  model     = model.mpt
  layout    = layout.published
  framework = "fsdp2"
  data      = "data/corpus"
  steps     = 100
  lr        = 1e-4
}
