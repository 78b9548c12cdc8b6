// gpuflow benchmark kernels: random fill, HBM triad and exact checks.
//
// Regenerate kernels.ptx with ./gen.sh (clang, PTX ISA 7.0 for sm_80, so
// that drivers from CUDA 11.0 on can load it; nvcc 13 would write ISA 9.0,
// which only drivers of CUDA 13 accept). The file also builds with nvcc:
//   nvcc -ptx -arch=compute_80 -o kernels.ptx kernels.cu
// Every kernel is extern "C" so its PTX name is its C name, and all take
// 64-bit element counts: a 4 GiB buffer of bf16 holds 2^31 elements.

#ifndef __NVCC__
// clang without the CUDA SDK: declare what nvcc predefines.
#include "__clang_cuda_builtin_vars.h"
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
static __device__ __forceinline__ unsigned long long
atomicAdd(unsigned long long *p, unsigned long long v) {
  return (unsigned long long)__nvvm_atom_add_gen_ll((long long *)p, (long long)v);
}
#endif

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

// Four floats moved as one 16-byte access.
struct alignas(16) f32x4 {
  float x, y, z, w;
};

// Data types, as the host passes them.
#define DT_F32 0
#define DT_F16 1
#define DT_BF16 2
#define DT_E4M3 3

// What a collective leaves in a rank's receive buffer (check_pattern).
#define MODE_ALL_REDUCE 0     // sum over ranks of f(q, i)
#define MODE_ALL_GATHER 1     // f(i / count, i % count)
#define MODE_REDUCE_SCATTER 2 // sum over ranks of f(q, rank*count + i)
#define MODE_ALLTOALL 3       // f(i / count, rank*count + i % count)
#define MODE_BROADCAST 4      // f(root, i)

static __device__ __forceinline__ u64 global_index() {
  return (u64)blockIdx.x * blockDim.x + threadIdx.x;
}

static __device__ __forceinline__ u64 global_stride() {
  return (u64)gridDim.x * blockDim.x;
}

// splitmix64's finaliser: 64 well-mixed bits from an index and a seed.
static __device__ __forceinline__ u64 mix64(u64 x, u64 seed) {
  x += seed * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static __device__ __forceinline__ u32 f32_bits(float f) {
  union { float f; u32 u; } x;
  x.f = f;
  return x.u;
}

static __device__ __forceinline__ float bits_f32(u32 u) {
  union { float f; u32 u; } x;
  x.u = u;
  return x.f;
}

// Uniform in [-1, 1) from 24 random bits.
static __device__ __forceinline__ float uniform(u64 r) {
  return (float)(r >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

// Round to nearest even; inputs are finite.
static __device__ __forceinline__ u16 f32_to_bf16(float f) {
  u32 u = f32_bits(f);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (u16)(u >> 16);
}

static __device__ __forceinline__ float bf16_to_f32(u16 h) {
  return bits_f32((u32)h << 16);
}

static __device__ __forceinline__ u16 f32_to_f16(float f) {
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

static __device__ __forceinline__ float f16_to_f32(u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}

// e4m3: bias 7, no infinities, NaN only at S.1111.111.
static __device__ __forceinline__ float e4m3_to_f32(u8 b) {
  u32 sign = (u32)(b >> 7) << 31;
  u32 exp = (b >> 3) & 0xFu;
  u32 man = b & 0x7u;
  if (exp == 0) {
    float v = (float)man * 0.001953125f; // man * 2^-9
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 120u) << 23) | (man << 20));
}

// load_as_f32 reads element i of a buffer of data type dt.
static __device__ __forceinline__ float load_as_f32(const void *p, int dt, u64 i) {
  switch (dt) {
  case DT_F16:
    return f16_to_f32(((const u16 *)p)[i]);
  case DT_BF16:
    return bf16_to_f32(((const u16 *)p)[i]);
  case DT_E4M3:
    return e4m3_to_f32(((const u8 *)p)[i]);
  default:
    return ((const float *)p)[i];
  }
}

// f32_to_e4m3 rounds |f| < 1 to nearest even e4m3 (bias 7; subnormals
// step 2^-9), as frameworks convert to float8_e4m3fn. sm_80 PTX has no
// e4m3 conversion, so it is done on the bits.
static __device__ __forceinline__ u32 f32_to_e4m3(float f) {
  u32 bits = f32_bits(f);
  u32 sign = (bits >> 24) & 0x80u;
  float a = bits_f32(bits & 0x7FFFFFFFu);
  if (a < 0.015625f) { // below 2^-6: subnormal, m * 2^-9 with m in 0..8
    float q = a * 512.0f;
    u32 m = (u32)(q + 0.5f);
    if ((float)m - q == 0.5f && (m & 1u)) {
      m--; // a tie rounds to even
    }
    return sign | m; // m == 8 is 2^-6, the smallest normal, bit for bit
  }
  u32 ab = f32_bits(a);
  u32 exp = (ab >> 23) - 120u; // 127 - 7
  u32 man = ab & 0x7FFFFFu;
  u32 m3 = man >> 20, rest = man & 0xFFFFFu;
  if (rest > 0x80000u || (rest == 0x80000u && (m3 & 1u))) {
    m3++;
  }
  if (m3 == 8u) {
    m3 = 0;
    exp++;
  }
  return sign | (exp << 3) | m3;
}

// random_bits is the bit pattern fill_random stores at element i: values
// uniform in [-1, 1), rounded to nearest even in the element type.
static __device__ __forceinline__ u32 random_bits(int dt, u64 i, u64 seed) {
  float v = uniform(mix64(i, seed));
  switch (dt) {
  case DT_F16:
    return f32_to_f16(v);
  case DT_BF16:
    return f32_to_bf16(v);
  case DT_E4M3:
    return f32_to_e4m3(v);
  default:
    return f32_bits(v);
  }
}

extern "C" {

// fill_random writes n seeded pseudo-random values of type dt: never a
// buffer of zeros, and the distribution PyTorch's rand()*2-1 gives.
__global__ void fill_random(void *out, int dt, u64 n, u64 seed) {
  for (u64 i = global_index(); i < n; i += global_stride()) {
    u32 v = random_bits(dt, i, seed);
    switch (dt) {
    case DT_F16:
    case DT_BF16:
      ((u16 *)out)[i] = (u16)v;
      break;
    case DT_E4M3:
      ((u8 *)out)[i] = (u8)v;
      break;
    default:
      ((u32 *)out)[i] = v;
    }
  }
}

// count_random_wrong counts elements of buf that differ from what
// fill_random(dt, seed) wrote there: the exact check of copies.
__global__ void count_random_wrong(const void *buf, int dt, u64 n, u64 seed, u64 *wrong) {
  u64 local = 0;
  for (u64 i = global_index(); i < n; i += global_stride()) {
    u32 got;
    switch (dt) {
    case DT_F16:
    case DT_BF16:
      got = ((const u16 *)buf)[i];
      break;
    case DT_E4M3:
      got = ((const u8 *)buf)[i];
      break;
    default:
      got = ((const u32 *)buf)[i];
    }
    if (got != random_bits(dt, i, seed)) {
      local++;
    }
  }
  if (local) {
    atomicAdd(wrong, local);
  }
}

// triad: a = b + s*c over n4 f32x4 vectors, four vectors a thread, all
// loads issued before the first store. The host sizes the grid so that
// every vector is covered once (n4 / (4*blockDim) blocks, rounded up).
__global__ void triad(f32x4 *a, const f32x4 *b, const f32x4 *c, float s, u64 n4) {
  u64 base = ((u64)blockIdx.x * blockDim.x * 4) + threadIdx.x;
  f32x4 vb[4], vc[4];
#pragma unroll
  for (int k = 0; k < 4; k++) {
    u64 i = base + (u64)k * blockDim.x;
    if (i < n4) {
      vb[k] = b[i];
      vc[k] = c[i];
    }
  }
#pragma unroll
  for (int k = 0; k < 4; k++) {
    u64 i = base + (u64)k * blockDim.x;
    if (i < n4) {
      f32x4 r;
      r.x = vb[k].x + s * vc[k].x;
      r.y = vb[k].y + s * vc[k].y;
      r.z = vb[k].z + s * vc[k].z;
      r.w = vb[k].w + s * vc[k].w;
      a[i] = r;
    }
  }
}

// count_triad_wrong counts elements where a != b + s*c exactly (the same
// single rounding the triad does).
__global__ void count_triad_wrong(const float *a, const float *b, const float *c, float s, u64 n,
                                  u64 *wrong) {
  u64 local = 0;
  for (u64 i = global_index(); i < n; i += global_stride()) {
    float want = b[i] + s * c[i];
    if (f32_bits(a[i]) != f32_bits(want)) {
      local++;
    }
  }
  if (local) {
    atomicAdd(wrong, local);
  }
}

} // extern "C"

// pattern is the value rank q contributes at element idx: a small integer
// in [-4, 4], so that sums over up to 64 ranks are exact in bf16 and fp16
// whatever order the reduction takes.
static __device__ __forceinline__ int pattern(int q, u64 idx) {
  return (int)((idx * 7ull + (u64)q * 13ull + 5ull) % 9ull) - 4;
}

static __device__ __forceinline__ void store_int(void *p, int dt, u64 i, int v) {
  switch (dt) {
  case DT_F16:
    ((u16 *)p)[i] = f32_to_f16((float)v);
    break;
  case DT_BF16:
    ((u16 *)p)[i] = f32_to_bf16((float)v);
    break;
  default:
    ((float *)p)[i] = (float)v;
  }
}

static __device__ __forceinline__ int expected(int mode, int rank, int nranks, int root, u64 count,
                                               u64 i) {
  int sum = 0;
  switch (mode) {
  case MODE_ALL_REDUCE:
    for (int q = 0; q < nranks; q++)
      sum += pattern(q, i);
    return sum;
  case MODE_ALL_GATHER:
    return pattern((int)(i / count), i % count);
  case MODE_REDUCE_SCATTER:
    for (int q = 0; q < nranks; q++)
      sum += pattern(q, (u64)rank * count + i);
    return sum;
  case MODE_ALLTOALL:
    return pattern((int)(i / count), (u64)rank * count + i % count);
  default:
    return pattern(root, i);
  }
}

extern "C" {

// fill_pattern writes pattern(rank, offset+i) for i in [0, n).
__global__ void fill_pattern(void *out, int dt, u64 n, u64 offset, int rank) {
  for (u64 i = global_index(); i < n; i += global_stride()) {
    store_int(out, dt, i, pattern(rank, offset + i));
  }
}

// check_pattern counts elements of a rank's receive buffer that differ from
// what the collective (mode) must leave there. Comparison is exact: the
// expected values are small integers, and a NaN poison never compares equal.
__global__ void check_pattern(const void *buf, int dt, u64 n, int mode, int rank, int nranks,
                              int root, u64 count, u64 *wrong) {
  u64 local = 0;
  for (u64 i = global_index(); i < n; i += global_stride()) {
    float got = load_as_f32(buf, dt, i);
    float want = (float)expected(mode, rank, nranks, root, count, i);
    if (!(got == want)) {
      local++;
    }
  }
  if (local) {
    atomicAdd(wrong, local);
  }
}

// gemm_sample recomputes sampled elements of D = op(A) * B in fp32 and
// writes (got, want) pairs, one block of 256 threads a sample. Element (i,
// k) of op(A) is a[i*a_si + k*a_sk], (k, j) of B is b[k*b_sk + j*b_sj] and
// (i, j) of D is d[i + j*ldd].
__global__ void gemm_sample(const void *a, int a_dt, u64 a_si, u64 a_sk, const void *b, int b_dt,
                            u64 b_sk, u64 b_sj, const void *d, int d_dt, u64 ldd, u64 m, u64 n,
                            u64 k, u64 seed, float *pairs) {
  __shared__ float partial[256];
  u64 r = mix64(blockIdx.x, seed);
  u64 i = (r & 0xFFFFFFFFull) % m;
  u64 j = (r >> 32) % n;
  float acc = 0.0f;
  for (u64 kk = threadIdx.x; kk < k; kk += blockDim.x) {
    acc += load_as_f32(a, a_dt, i * a_si + kk * a_sk) * load_as_f32(b, b_dt, kk * b_sk + j * b_sj);
  }
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (u32 half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      partial[threadIdx.x] += partial[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    pairs[2 * blockIdx.x] = load_as_f32(d, d_dt, i + j * ldd);
    pairs[2 * blockIdx.x + 1] = partial[0];
  }
}

} // extern "C"
