# Source: MosaicML LLM Foundry, "MPT Training Benchmarks" (scripts/train/benchmarking/README.md), table "H100 80GB BF16": MPT-70b, sequence 2048, 32 GPUs, micro-batch 2, gradient accumulation 16, global batch 1024, amp_bf16, FSDP mixed precision DEFAULT (fp32 reduction), FULL_SHARD, activation checkpointing True.
# Published: 882 tokens/s per GPU: step 74.3039 s.
# published_step_s = 74.3039
#
# Planned by TestPublishedFSDP (engine/validation_test.go) as a new user
# would write it: the MPT shape (LayerNorm, GELU, one fused qkv product,
# tied embeddings; its learned positions are left out), FULL_SHARD as
# fsdp on 32 GPUs, activation checkpointing as full recomputation.

hardware "cluster" {
  profile = "dgx-h100"
  nodes   = 4
}

model "mpt" {
  layers          = 80
  hidden          = 8192
  ffn_hidden      = 32768
  heads           = 64
  vocab           = 50368
  seq_len         = 2048
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp           = 1
  pp           = 1
  dp           = 32
  fsdp         = true
  micro_batch  = 2
  global_batch = 1024
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
