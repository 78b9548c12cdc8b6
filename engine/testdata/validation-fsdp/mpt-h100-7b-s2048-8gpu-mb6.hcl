# Source: MosaicML LLM Foundry, "MPT Training Benchmarks" (scripts/train/benchmarking/README.md), table "H100 80GB BF16": MPT-7b, sequence 2048, 8 GPUs, micro-batch 6, gradient accumulation 1, global batch 48, amp_bf16, FSDP mixed precision DEFAULT (fp32 reduction), FULL_SHARD, activation checkpointing False.
# Published: 10643 tokens/s per GPU: step 1.1546 s.
# published_step_s = 1.1546
#
# Planned by TestPublishedFSDP (engine/validation_test.go) as a new user
# would write it: the MPT shape (LayerNorm, GELU, one fused qkv product,
# tied embeddings; its learned positions are left out), FULL_SHARD as
# fsdp on 8 GPUs, activation checkpointing as full recomputation.

hardware "cluster" {
  profile = "dgx-h100"
  nodes   = 1
}

model "mpt" {
  layers          = 32
  hidden          = 4096
  ffn_hidden      = 16384
  heads           = 32
  vocab           = 50368
  seq_len         = 2048
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp           = 1
  pp           = 1
  dp           = 8
  fsdp         = true
  micro_batch  = 6
  global_batch = 48
  recompute    = "none"
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
