// Package node is the small interface between the benchmark stage's pure
// Go logic and the native layer that drives the GPUs of one machine: what
// can be measured (Node), the specification of each measurement and its
// raw result, and the byte accounting of collectives as nccl-tests defines
// it.
//
// Results here are raw (seconds, bytes, counts of wrong elements); turning
// them into figures, tables and pass/fail verdicts is plugins/gpubench's
// job. Talking to the libraries is plugins/gpubench/native's.
package node
