// Package cluster is the benchmark stage's part of a multi-node job: where
// this node stands in the job (read from the request's environment, see
// plugins/api/env.go), the exchange of NCCL's unique id and of each node's
// per-rank collective times through files in the job's shared directory,
// and the straggler verdict node 0 draws from those times.
//
// It is pure Go and touches no GPU: plugins/gpubench/native makes the id
// and joins the communicator; plugins/gpubench runs the sweep. Nothing here
// opens a network connection; the shared file system is the only channel.
package cluster
