// Package dataprep is the data_prep stage plugin: it turns raw text (JSONL,
// JSONL through a template, plain text) into the token shards training
// stages read (Megatron indexed datasets, .npy arrays), through
// plugins/dataprep/pipeline with the tokenizer of plugins/dataprep/bpe.
//
// This package holds the stage's schema, the decoding of its configuration
// into diagnostics that point at the HCL attribute at fault, its plan
// details, and the mapping of a pipeline run to events and outputs. It holds
// no tokenizing or file-format code.
package dataprep
