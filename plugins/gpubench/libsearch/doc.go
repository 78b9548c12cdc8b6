// Package libsearch finds the NVIDIA shared libraries the benchmark stage
// loads at run time (the CUDA driver, NVML, cuBLASLt, NCCL) and remembers
// every place it looked, so that a machine without them gets a message
// naming what was missing and where it was sought.
//
// It only computes paths; opening them is plugins/gpubench/native's job.
package libsearch
