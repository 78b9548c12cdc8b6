// Package shard writes and reads token shards in the formats training code
// reads: Megatron-LM's indexed dataset (a .bin of tokens and a .idx in the
// MMIDIDX layout) and NumPy .npy arrays of uint16 or uint32 tokens.
//
// Every file is written atomically: to a temporary file in the same folder,
// synced, then renamed over the final name, so a reader never sees a
// half-written shard under its final name. A Megatron shard is two files;
// the pair is committed .bin first, then .idx, and callers record a shard as
// done only after Commit returns.
//
// It knows nothing of tokenizers, splits or manifests: see
// plugins/dataprep/pipeline.
package shard
