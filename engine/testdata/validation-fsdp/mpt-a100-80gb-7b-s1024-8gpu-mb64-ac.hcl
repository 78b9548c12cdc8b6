# Source: MosaicML LLM Foundry, "MPT Training Benchmarks" (scripts/train/benchmarking/README.md), table "A100 80GB with 1600 Gbps node-node interconnect (RoCE)": MPT-7b, sequence 1024, 8 GPUs, micro-batch 64, gradient accumulation 2, global batch 1024, amp_bf16, FSDP mixed precision DEFAULT (fp32 reduction), FULL_SHARD, activation checkpointing True.
# Published: 4357 tokens/s per GPU: step 30.0831 s.
# published_step_s = 30.0831
#
# Planned by TestPublishedFSDP (engine/validation_test.go) as a new user
# would write it: the MPT shape (LayerNorm, GELU, one fused qkv product,
# tied embeddings; its learned positions are left out), FULL_SHARD as
# fsdp on 8 GPUs, activation checkpointing as full recomputation.

hardware "cluster" {
  profile = "dgx-a100-80gb"
  nodes   = 1
}

model "mpt" {
  layers          = 32
  hidden          = 4096
  ffn_hidden      = 16384
  heads           = 32
  vocab           = 50368
  seq_len         = 1024
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp           = 1
  pp           = 1
  dp           = 8
  fsdp         = true
  micro_batch  = 64
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
