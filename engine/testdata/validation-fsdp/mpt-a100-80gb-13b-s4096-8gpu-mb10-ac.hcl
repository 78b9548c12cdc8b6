# Source: MosaicML LLM Foundry, "MPT Training Benchmarks" (scripts/train/benchmarking/README.md), table "A100 80GB with 1600 Gbps node-node interconnect (RoCE)": MPT-13b, sequence 4096, 8 GPUs, micro-batch 10, gradient accumulation 3, global batch 240, amp_bf16, FSDP mixed precision DEFAULT (fp32 reduction), FULL_SHARD, activation checkpointing True.
# Published: 2060 tokens/s per GPU: step 59.6505 s.
# published_step_s = 59.6505
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
  layers          = 40
  hidden          = 5120
  ffn_hidden      = 20480
  heads           = 40
  vocab           = 50368
  seq_len         = 4096
  tied_embeddings = true
  activation      = "gelu"
}

layout "published" {
  tp           = 1
  pp           = 1
  dp           = 8
  fsdp         = true
  micro_batch  = 10
  global_batch = 240
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
