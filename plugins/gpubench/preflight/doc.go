// Package preflight holds the host checks that catch a node NCCL will
// struggle on before any GPU work: the width of the ephemeral port range
// (NCCL's bootstrap opens a TCP connection per peer), whether this process
// may run on the CPUs next to each GPU, and NCCL_* settings that slow
// NCCL down or that nothing reads (a typo).
//
// It reads /proc, /sys and the environment through an fs.FS and a getenv
// function, so tests run on fixtures; GPU state is plugins/gpubench/native's.
package preflight
