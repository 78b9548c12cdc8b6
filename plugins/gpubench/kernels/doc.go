// Package kernels holds gpuflow's own GPU kernels for the benchmark stage:
// random data fill, the HBM triad, and the exact checks of copies,
// collectives and sampled GEMM elements. kernels.cu is the source;
// kernels.ptx, generated from it by gen.sh, is committed and embedded, so
// building gpuflow needs no CUDA compiler. The driver JIT-compiles the PTX
// when the native layer loads it with cuModuleLoadData.
//
// It holds no host code: launching is plugins/gpubench/native's job.
package kernels
