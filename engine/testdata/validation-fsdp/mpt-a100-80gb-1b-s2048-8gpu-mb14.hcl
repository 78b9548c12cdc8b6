# Source: MosaicML LLM Foundry, "MPT Training Benchmarks" (scripts/train/benchmarking/README.md), table "A100 80GB with 1600 Gbps node-node interconnect (RoCE)": MPT-1b, sequence 2048, 8 GPUs, micro-batch 14, gradient accumulation 4, global batch 448, amp_bf16, FSDP mixed precision DEFAULT (fp32 reduction), FULL_SHARD, activation checkpointing False.
# Published: 20513 tokens/s per GPU: step 5.5910 s.
# published_step_s = 5.5910
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
  layers          = 24
  hidden          = 2048
  ffn_hidden      = 8192
  heads           = 16
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
  micro_batch  = 14
  global_batch = 448
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
