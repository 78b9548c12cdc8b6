// Package native drives the GPUs of one machine through the NVIDIA
// libraries, loaded at run time with dlopen from cgo: the CUDA driver API
// (contexts, memory, streams, events, and gpuflow's own PTX kernels),
// cuBLASLt (matrix products), NCCL (collectives) and NVML (health). It
// implements node.Node and is the only package of gpuflow with native code.
//
// Building needs a C compiler (CGO_ENABLED=1) but no CUDA SDK: shim.h
// declares the few functions called. Without cgo, Open reports that this
// build cannot load the libraries. Every library call's return code is
// checked; errors carry the library's own error string.
//
// Each GPU is driven by its own goroutine locked to an OS thread with the
// GPU's primary context current, so that work on all GPUs proceeds at once
// and NCCL sees one thread per rank.
package native
