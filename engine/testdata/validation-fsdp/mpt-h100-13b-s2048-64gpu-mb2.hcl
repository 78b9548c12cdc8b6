# Source: MosaicML LLM Foundry, "MPT Training Benchmarks" (scripts/train/benchmarking/README.md), table "H100 80GB BF16": MPT-13b, sequence 2048, 64 GPUs, micro-batch 2, gradient accumulation 1, global batch 128, amp_bf16, FSDP mixed precision DEFAULT (fp32 reduction), FULL_SHARD, activation checkpointing False.
# Published: 4800 tokens/s per GPU: step 0.8533 s.
# published_step_s = 0.8533
#
# Planned by TestPublishedFSDP (engine/validation_test.go) as a new user
# would write it: the MPT shape (LayerNorm, GELU, one fused qkv product,
# tied embeddings; its learned positions are left out), FULL_SHARD as
# fsdp on 64 GPUs, activation checkpointing as full recomputation.

hardware "cluster" {
  profile = "dgx-h100"
  nodes   = 8
}

model "mpt" {
  layers          = 40
  hidden          = 5120
  ffn_hidden      = 20480
  heads           = 40
  vocab           = 50368
  seq_len         = 2048
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp           = 1
  pp           = 1
  dp           = 64
  fsdp         = true
  micro_batch  = 2
  global_batch = 128
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
