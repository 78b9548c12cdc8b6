#!/bin/sh
# Regenerates kernels.ptx from kernels.cu. Needs clang (14 or later; no CUDA
# SDK), which writes PTX ISA 7.0 for sm_80: any driver from CUDA 11.0 on
# loads it and JIT-compiles it for the GPU at hand (Ampere, Hopper,
# Blackwell). Run from this folder: ./gen.sh
set -eu
CLANG=${CLANG:-$(command -v clang-14 || command -v clang)}
"$CLANG" -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib \
	-O3 -S -o kernels.ptx kernels.cu
