// Package gpubench is the "benchmark" stage type: the acceptance checks an
// operator runs before trusting a GPU node (health through NVML, GEMM
// throughput through cuBLASLt, HBM bandwidth, peer-to-peer copies, NCCL
// collectives), each optional, each with `expect { ... }` thresholds and a
// verdict.
//
// This package is pure Go: the stage body's schema and decoding, the plan's
// details, the runner that drives a node.Node check by check, threshold
// evaluation, and the results (JSON file, stage outputs, tables). The GPUs
// are reached through plugins/gpubench/native; host checks live in
// plugins/gpubench/preflight.
package gpubench
