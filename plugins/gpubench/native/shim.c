//go:build cgo && linux

#include "shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

// Each X(ret, symbol, params, args) entry becomes a function pointer p_symbol
// resolved by gf_load and, where W is used, a gf_ wrapper that calls it.
// OPT entries may be missing from older libraries.

#define CUDA_FUNCS(X)                                                                      \
  X(CUresult, cuInit, (unsigned int flags), (flags))                                       \
  X(CUresult, cuDriverGetVersion, (int *v), (v))                                           \
  X(CUresult, cuDeviceGetCount, (int *n), (n))                                             \
  X(CUresult, cuDeviceGet, (CUdevice * d, int ordinal), (d, ordinal))                      \
  X(CUresult, cuDeviceGetName, (char *name, int len, CUdevice d), (name, len, d))          \
  X(CUresult, cuDeviceGetAttribute, (int *v, int attrib, CUdevice d), (v, attrib, d))      \
  X(CUresult, cuDeviceTotalMem_v2, (size_t * bytes, CUdevice d), (bytes, d))               \
  X(CUresult, cuDeviceGetPCIBusId, (char *id, int len, CUdevice d), (id, len, d))          \
  X(CUresult, cuDeviceCanAccessPeer, (int *can, CUdevice d, CUdevice peer), (can, d, peer)) \
  X(CUresult, cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice d), (ctx, d))           \
  X(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice d), (d))                             \
  X(CUresult, cuCtxSetCurrent, (CUcontext ctx), (ctx))                                     \
  X(CUresult, cuCtxEnablePeerAccess, (CUcontext peer, unsigned int flags), (peer, flags))  \
  X(CUresult, cuMemAlloc_v2, (CUdeviceptr * p, size_t bytes), (p, bytes))                  \
  X(CUresult, cuMemFree_v2, (CUdeviceptr p), (p))                                          \
  X(CUresult, cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes), (dst, src, bytes)) \
  X(CUresult, cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s), \
    (dst, src, bytes, s))                                                                  \
  X(CUresult, cuMemcpyPeerAsync,                                                           \
    (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t bytes, CUstream s), \
    (dst, dctx, src, sctx, bytes, s))                                                      \
  X(CUresult, cuMemsetD8Async, (CUdeviceptr p, unsigned char v, size_t n, CUstream s),     \
    (p, v, n, s))                                                                          \
  X(CUresult, cuStreamCreate, (CUstream * s, unsigned int flags), (s, flags))              \
  X(CUresult, cuStreamDestroy_v2, (CUstream s), (s))                                       \
  X(CUresult, cuStreamSynchronize, (CUstream s), (s))                                      \
  X(CUresult, cuStreamWaitEvent, (CUstream s, CUevent e, unsigned int flags), (s, e, flags)) \
  X(CUresult, cuEventCreate, (CUevent * e, unsigned int flags), (e, flags))                \
  X(CUresult, cuEventDestroy_v2, (CUevent e), (e))                                         \
  X(CUresult, cuEventRecord, (CUevent e, CUstream s), (e, s))                              \
  X(CUresult, cuEventQuery, (CUevent e), (e))                                              \
  X(CUresult, cuEventSynchronize, (CUevent e), (e))                                        \
  X(CUresult, cuModuleUnload, (CUmodule m), (m))                                           \
  X(CUresult, cuModuleGetFunction, (CUfunction * f, CUmodule m, const char *name), (f, m, name))

#define CUDA_OPT(X)                                                                        \
  X(CUresult, cuEventElapsedTime_v2, (float *ms, CUevent a, CUevent b), (ms, a, b))        \
  X(CUresult, cuEventElapsedTime, (float *ms, CUevent a, CUevent b), (ms, a, b))

#define CUDA_PTRS(X)                                                                       \
  X(CUresult, cuGetErrorString, (CUresult r, const char **s), (r, s))                      \
  X(CUresult, cuModuleLoadDataEx,                                                          \
    (CUmodule * m, const void *image, unsigned int n, int *opts, void **vals),             \
    (m, image, n, opts, vals))                                                             \
  X(CUresult, cuLaunchKernel,                                                              \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,        \
     unsigned bz, unsigned shmem, CUstream s, void **params, void **extra),                \
    (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra))

#define NVML_FUNCS(X)                                                                      \
  X(nvmlReturn_t, nvmlInit_v2, (void), ())                                                 \
  X(nvmlReturn_t, nvmlShutdown, (void), ())                                                \
  X(nvmlReturn_t, nvmlSystemGetDriverVersion, (char *v, unsigned int len), (v, len))       \
  X(nvmlReturn_t, nvmlDeviceGetHandleByPciBusId_v2, (const char *bus, nvmlDevice_t *d), (bus, d)) \
  X(nvmlReturn_t, nvmlDeviceGetName, (nvmlDevice_t d, char *name, unsigned int len), (d, name, len)) \
  X(nvmlReturn_t, nvmlDeviceGetUUID, (nvmlDevice_t d, char *u, unsigned int len), (d, u, len)) \
  X(nvmlReturn_t, nvmlDeviceGetMemoryInfo, (nvmlDevice_t d, nvmlMemory_t * m), (d, m))     \
  X(nvmlReturn_t, nvmlDeviceGetEccMode, (nvmlDevice_t d, int *cur, int *pend), (d, cur, pend)) \
  X(nvmlReturn_t, nvmlDeviceGetTotalEccErrors,                                             \
    (nvmlDevice_t d, int et, int ct, unsigned long long *n), (d, et, ct, n))               \
  X(nvmlReturn_t, nvmlDeviceGetNvLinkState, (nvmlDevice_t d, unsigned int l, int *a), (d, l, a)) \
  X(nvmlReturn_t, nvmlDeviceGetCurrPcieLinkGeneration, (nvmlDevice_t d, unsigned int *v), (d, v)) \
  X(nvmlReturn_t, nvmlDeviceGetMaxPcieLinkGeneration, (nvmlDevice_t d, unsigned int *v), (d, v)) \
  X(nvmlReturn_t, nvmlDeviceGetCurrPcieLinkWidth, (nvmlDevice_t d, unsigned int *v), (d, v)) \
  X(nvmlReturn_t, nvmlDeviceGetMaxPcieLinkWidth, (nvmlDevice_t d, unsigned int *v), (d, v)) \
  X(nvmlReturn_t, nvmlDeviceGetTemperature, (nvmlDevice_t d, int sensor, unsigned int *v), \
    (d, sensor, v))                                                                        \
  X(nvmlReturn_t, nvmlDeviceGetPowerUsage, (nvmlDevice_t d, unsigned int *mw), (d, mw))    \
  X(nvmlReturn_t, nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t d, unsigned int *mw), (d, mw))

#define NVML_OPT(X)                                                                        \
  X(nvmlReturn_t, nvmlDeviceGetRemappedRows,                                               \
    (nvmlDevice_t d, unsigned int *c, unsigned int *u, unsigned int *p, unsigned int *f),  \
    (d, c, u, p, f))                                                                       \
  X(nvmlReturn_t, nvmlDeviceGetRetiredPages,                                               \
    (nvmlDevice_t d, int cause, unsigned int *n, unsigned long long *a), (d, cause, n, a))

#define NVML_PTRS(X)                                                                       \
  X(const char *, nvmlErrorString, (nvmlReturn_t r), (r))                                  \
  X(nvmlReturn_t, nvmlDeviceGetCurrentClocksEventReasons,                                  \
    (nvmlDevice_t d, unsigned long long *r), (d, r))                                       \
  X(nvmlReturn_t, nvmlDeviceGetCurrentClocksThrottleReasons,                               \
    (nvmlDevice_t d, unsigned long long *r), (d, r))

#define LT_FUNCS(X)                                                                        \
  X(cublasStatus_t, cublasLtCreate, (cublasLtHandle_t * h), (h))                           \
  X(cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t h), (h))                            \
  X(cublasStatus_t, cublasLtMatmulDescCreate, (cublasLtMatmulDesc_t * d, int ct, int st),  \
    (d, ct, st))                                                                           \
  X(cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t d), (d))              \
  X(cublasStatus_t, cublasLtMatrixLayoutCreate,                                            \
    (cublasLtMatrixLayout_t * l, int type, uint64_t rows, uint64_t cols, int64_t ld),      \
    (l, type, rows, cols, ld))                                                             \
  X(cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t l), (l))          \
  X(cublasStatus_t, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * p), (p)) \
  X(cublasStatus_t, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t p), (p))  \
  X(cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,                                        \
    (cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,                 \
     cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dl,        \
     cublasLtMatmulPreference_t p, int req, cublasLtMatmulHeuristicResult_t *res, int *ret), \
    (h, d, a, b, c, dl, p, req, res, ret))

#define LT_PTRS(X)                                                                         \
  X(size_t, cublasLtGetVersion, (void), ())                                                \
  X(const char *, cublasLtGetStatusName, (cublasStatus_t s), (s))                          \
  X(cublasStatus_t, cublasLtMatmulDescSetAttribute,                                        \
    (cublasLtMatmulDesc_t d, int attr, const void *buf, size_t n), (d, attr, buf, n))      \
  X(cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,                                  \
    (cublasLtMatmulPreference_t p, int attr, const void *buf, size_t n), (p, attr, buf, n)) \
  X(cublasStatus_t, cublasLtMatmul,                                                        \
    (cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *a,      \
     cublasLtMatrixLayout_t al, const void *b, cublasLtMatrixLayout_t bl, const void *beta, \
     const void *c, cublasLtMatrixLayout_t cl, void *d, cublasLtMatrixLayout_t dl,         \
     const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsn, CUstream s),                  \
    (h, desc, alpha, a, al, b, bl, beta, c, cl, d, dl, algo, ws, wsn, s))

#define NCCL_FUNCS(X)                                                                      \
  X(ncclResult_t, ncclGetVersion, (int *v), (v))                                           \
  X(ncclResult_t, ncclGetUniqueId, (ncclUniqueId * id), (id))                              \
  X(ncclResult_t, ncclCommDestroy, (ncclComm_t c), (c))                                    \
  X(ncclResult_t, ncclCommAbort, (ncclComm_t c), (c))                                      \
  X(ncclResult_t, ncclCommGetAsyncError, (ncclComm_t c, ncclResult_t * r), (c, r))         \
  X(ncclResult_t, ncclGroupStart, (void), ())                                              \
  X(ncclResult_t, ncclGroupEnd, (void), ())

#define NCCL_PTRS(X)                                                                       \
  X(const char *, ncclGetErrorString, (ncclResult_t r), (r))                               \
  X(ncclResult_t, ncclCommInitRank, (ncclComm_t * c, int n, ncclUniqueId id, int rank),    \
    (c, n, id, rank))                                                                      \
  X(ncclResult_t, ncclAllReduce,                                                           \
    (const void *s, void *r, size_t n, int dt, int op, ncclComm_t c, CUstream st),         \
    (s, r, n, dt, op, c, st))                                                              \
  X(ncclResult_t, ncclAllGather, (const void *s, void *r, size_t n, int dt, ncclComm_t c, CUstream st), \
    (s, r, n, dt, c, st))                                                                  \
  X(ncclResult_t, ncclReduceScatter,                                                       \
    (const void *s, void *r, size_t n, int dt, int op, ncclComm_t c, CUstream st),         \
    (s, r, n, dt, op, c, st))                                                              \
  X(ncclResult_t, ncclBroadcast,                                                           \
    (const void *s, void *r, size_t n, int dt, int root, ncclComm_t c, CUstream st),       \
    (s, r, n, dt, root, c, st))                                                            \
  X(ncclResult_t, ncclSend, (const void *s, size_t n, int dt, int peer, ncclComm_t c, CUstream st), \
    (s, n, dt, peer, c, st))                                                               \
  X(ncclResult_t, ncclRecv, (void *r, size_t n, int dt, int peer, ncclComm_t c, CUstream st), \
    (r, n, dt, peer, c, st))

#define NCCL_OPT(X) X(const char *, ncclGetLastError, (ncclComm_t c), (c))

#define DECLARE(ret, name, params, args) static ret(*p_##name) params;
CUDA_FUNCS(DECLARE)
CUDA_OPT(DECLARE)
CUDA_PTRS(DECLARE)
NVML_FUNCS(DECLARE)
NVML_OPT(DECLARE)
NVML_PTRS(DECLARE)
LT_FUNCS(DECLARE)
LT_PTRS(DECLARE)
NCCL_FUNCS(DECLARE)
NCCL_PTRS(DECLARE)
NCCL_OPT(DECLARE)

// Plain wrappers: gf_<name without a _vN suffix> is defined by hand below
// where the name differs; here the macro keeps the symbol's name.
#define WRAP(ret, name, params, args)                                                      \
  ret gf_##name params { return p_##name args; }
#define WRAP_OPT(ret, name, params, args)                                                  \
  ret gf_##name params {                                                                   \
    if (!p_##name)                                                                         \
      return GF_MISSING_SYMBOL;                                                            \
    return p_##name args;                                                                  \
  }

struct sym {
  const char *name;
  void **slot;
  int optional;
};

#define SYM(ret, name, params, args) {#name, (void **)&p_##name, 0},
#define SYM_OPT(ret, name, params, args) {#name, (void **)&p_##name, 1},

static struct sym cuda_syms[] = {CUDA_FUNCS(SYM) CUDA_PTRS(SYM) CUDA_OPT(SYM_OPT){0, 0, 0}};
static struct sym nvml_syms[] = {NVML_FUNCS(SYM) NVML_OPT(SYM_OPT) NVML_PTRS(SYM_OPT){0, 0, 0}};
static struct sym lt_syms[] = {LT_FUNCS(SYM) LT_PTRS(SYM){0, 0, 0}};
static struct sym nccl_syms[] = {NCCL_FUNCS(SYM) NCCL_PTRS(SYM) NCCL_OPT(SYM_OPT){0, 0, 0}};

int gf_load(int lib, const char *path, char *err, size_t errlen) {
  struct sym *syms[] = {cuda_syms, nvml_syms, lt_syms, nccl_syms};
  if (lib < 0 || lib > GF_NCCL) {
    snprintf(err, errlen, "unknown library %d", lib);
    return -1;
  }
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    snprintf(err, errlen, "dlopen %s: %s", path, dlerror());
    return -1;
  }
  for (struct sym *s = syms[lib]; s->name; s++) {
    *s->slot = dlsym(h, s->name);
    if (!*s->slot && !s->optional) {
      snprintf(err, errlen, "%s lacks %s", path, s->name);
      return -1;
    }
  }
  if (lib == GF_CUDA && !p_cuEventElapsedTime_v2 && !p_cuEventElapsedTime) {
    snprintf(err, errlen, "%s lacks cuEventElapsedTime", path);
    return -1;
  }
  if (lib == GF_NVML && !p_nvmlErrorString) {
    snprintf(err, errlen, "%s lacks nvmlErrorString", path);
    return -1;
  }
  return 0;
}

CUDA_FUNCS(WRAP)
NVML_FUNCS(WRAP)
NVML_OPT(WRAP_OPT)
LT_FUNCS(WRAP)
NCCL_FUNCS(WRAP)

// ---- CUDA driver ----

CUresult gf_cuDeviceTotalMem(size_t *bytes, CUdevice d) { return p_cuDeviceTotalMem_v2(bytes, d); }
CUresult gf_cuDevicePrimaryCtxRelease(CUdevice d) { return p_cuDevicePrimaryCtxRelease_v2(d); }
CUresult gf_cuMemAlloc(CUdeviceptr *p, size_t bytes) { return p_cuMemAlloc_v2(p, bytes); }
CUresult gf_cuMemFree(CUdeviceptr p) { return p_cuMemFree_v2(p); }
CUresult gf_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  return p_cuMemcpyDtoH_v2(dst, src, bytes);
}
CUresult gf_cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  return p_cuMemcpyDtoDAsync_v2(dst, src, bytes, s);
}
CUresult gf_cuStreamDestroy(CUstream s) { return p_cuStreamDestroy_v2(s); }
CUresult gf_cuEventDestroy(CUevent e) { return p_cuEventDestroy_v2(e); }

CUresult gf_cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  if (p_cuEventElapsedTime_v2)
    return p_cuEventElapsedTime_v2(ms, a, b);
  return p_cuEventElapsedTime(ms, a, b);
}

const char *gf_cuErrorString(CUresult r) {
  const char *s = NULL;
  if (p_cuGetErrorString && p_cuGetErrorString(r, &s) == 0 && s)
    return s;
  return "unknown CUDA error";
}

CUresult gf_load_module(CUmodule *m, const char *ptx, char *log, size_t loglen) {
  // CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
  int opts[2] = {5, 6};
  void *vals[2] = {log, (void *)loglen};
  log[0] = 0;
  return p_cuModuleLoadDataEx(m, ptx, 2, opts, vals);
}

static CUresult launch(CUfunction f, unsigned grid, unsigned block, CUstream s, void **params) {
  return p_cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, params, NULL);
}

CUresult gf_fill_random(CUfunction f, unsigned grid, CUstream s, CUdeviceptr out, int dt,
                        unsigned long long n, unsigned long long seed) {
  void *p[] = {&out, &dt, &n, &seed};
  return launch(f, grid, 256, s, p);
}

CUresult gf_count_random_wrong(CUfunction f, unsigned grid, CUstream s, CUdeviceptr buf, int dt,
                               unsigned long long n, unsigned long long seed, CUdeviceptr wrong) {
  void *p[] = {&buf, &dt, &n, &seed, &wrong};
  return launch(f, grid, 256, s, p);
}

CUresult gf_triad(CUfunction f, unsigned grid, CUstream s, CUdeviceptr a, CUdeviceptr b,
                  CUdeviceptr c, float scalar, unsigned long long n4) {
  void *p[] = {&a, &b, &c, &scalar, &n4};
  return launch(f, grid, 256, s, p);
}

CUresult gf_count_triad_wrong(CUfunction f, unsigned grid, CUstream s, CUdeviceptr a,
                              CUdeviceptr b, CUdeviceptr c, float scalar, unsigned long long n,
                              CUdeviceptr wrong) {
  void *p[] = {&a, &b, &c, &scalar, &n, &wrong};
  return launch(f, grid, 256, s, p);
}

CUresult gf_fill_pattern(CUfunction f, unsigned grid, CUstream s, CUdeviceptr out, int dt,
                         unsigned long long n, unsigned long long offset, int rank) {
  void *p[] = {&out, &dt, &n, &offset, &rank};
  return launch(f, grid, 256, s, p);
}

CUresult gf_check_pattern(CUfunction f, unsigned grid, CUstream s, CUdeviceptr buf, int dt,
                          unsigned long long n, int mode, int rank, int nranks, int root,
                          unsigned long long count, CUdeviceptr wrong) {
  void *p[] = {&buf, &dt, &n, &mode, &rank, &nranks, &root, &count, &wrong};
  return launch(f, grid, 256, s, p);
}

CUresult gf_gemm_sample(CUfunction f, unsigned samples, CUstream s, CUdeviceptr a, int a_dt,
                        unsigned long long a_si, unsigned long long a_sk, CUdeviceptr b, int b_dt,
                        unsigned long long b_sk, unsigned long long b_sj, CUdeviceptr d, int d_dt,
                        unsigned long long ldd, unsigned long long m, unsigned long long n,
                        unsigned long long k, unsigned long long seed, CUdeviceptr pairs) {
  void *p[] = {&a, &a_dt, &a_si, &a_sk, &b, &b_dt, &b_sk, &b_sj, &d,
               &d_dt, &ldd, &m, &n, &k, &seed, &pairs};
  return launch(f, samples, 256, s, p);
}

// ---- NVML ----

nvmlReturn_t gf_nvmlInit(void) { return p_nvmlInit_v2(); }
const char *gf_nvmlErrorString(nvmlReturn_t r) { return p_nvmlErrorString(r); }
nvmlReturn_t gf_nvmlDeviceGetHandleByPciBusId(const char *bus, nvmlDevice_t *d) {
  return p_nvmlDeviceGetHandleByPciBusId_v2(bus, d);
}

nvmlReturn_t gf_nvmlDeviceGetClockEventReasons(nvmlDevice_t d, unsigned long long *reasons) {
  if (p_nvmlDeviceGetCurrentClocksEventReasons)
    return p_nvmlDeviceGetCurrentClocksEventReasons(d, reasons);
  if (p_nvmlDeviceGetCurrentClocksThrottleReasons)
    return p_nvmlDeviceGetCurrentClocksThrottleReasons(d, reasons);
  return GF_MISSING_SYMBOL;
}

// ---- cuBLASLt ----

size_t gf_cublasLtGetVersion(void) { return p_cublasLtGetVersion(); }

const char *gf_cublasLtGetStatusName(cublasStatus_t s) {
  const char *n = p_cublasLtGetStatusName ? p_cublasLtGetStatusName(s) : NULL;
  return n ? n : "unknown cuBLAS status";
}

cublasStatus_t gf_cublasLtMatmulDescSetInt32(cublasLtMatmulDesc_t d, int attr, int32_t v) {
  return p_cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof v);
}

cublasStatus_t gf_cublasLtMatmulPreferenceSetUint64(cublasLtMatmulPreference_t p, int attr,
                                                    uint64_t v) {
  return p_cublasLtMatmulPreferenceSetAttribute(p, attr, &v, sizeof v);
}

cublasStatus_t gf_cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, CUdeviceptr a,
                                 cublasLtMatrixLayout_t al, CUdeviceptr b,
                                 cublasLtMatrixLayout_t bl, CUdeviceptr d,
                                 cublasLtMatrixLayout_t dl, const cublasLtMatmulAlgo_t *algo,
                                 CUdeviceptr ws, size_t wsBytes, CUstream s) {
  const float one = 1.0f, zero = 0.0f;
  return p_cublasLtMatmul(h, desc, &one, (const void *)a, al, (const void *)b, bl, &zero,
                          (const void *)d, dl, (void *)d, dl, algo, (void *)ws, wsBytes, s);
}

// ---- NCCL ----

const char *gf_ncclGetErrorString(ncclResult_t r) { return p_ncclGetErrorString(r); }

const char *gf_ncclGetLastError(ncclComm_t c) {
  const char *s = p_ncclGetLastError ? p_ncclGetLastError(c) : NULL;
  return s ? s : "";
}

ncclResult_t gf_ncclCommInitRank(ncclComm_t *c, int nranks, const ncclUniqueId *id, int rank) {
  return p_ncclCommInitRank(c, nranks, *id, rank);
}

ncclResult_t gf_ncclAllReduce(CUdeviceptr send, CUdeviceptr recv, size_t count, int dt, int op,
                              ncclComm_t c, CUstream s) {
  return p_ncclAllReduce((const void *)send, (void *)recv, count, dt, op, c, s);
}

ncclResult_t gf_ncclAllGather(CUdeviceptr send, CUdeviceptr recv, size_t sendcount, int dt,
                              ncclComm_t c, CUstream s) {
  return p_ncclAllGather((const void *)send, (void *)recv, sendcount, dt, c, s);
}

ncclResult_t gf_ncclReduceScatter(CUdeviceptr send, CUdeviceptr recv, size_t recvcount, int dt,
                                  int op, ncclComm_t c, CUstream s) {
  return p_ncclReduceScatter((const void *)send, (void *)recv, recvcount, dt, op, c, s);
}

ncclResult_t gf_ncclBroadcast(CUdeviceptr send, CUdeviceptr recv, size_t count, int dt, int root,
                              ncclComm_t c, CUstream s) {
  return p_ncclBroadcast((const void *)send, (void *)recv, count, dt, root, c, s);
}

ncclResult_t gf_ncclAlltoall(CUdeviceptr send, CUdeviceptr recv, size_t count, size_t elemBytes,
                             int dt, int nranks, ncclComm_t c, CUstream s) {
  ncclResult_t r = p_ncclGroupStart();
  if (r != 0)
    return r;
  for (int peer = 0; peer < nranks; peer++) {
    size_t off = (size_t)peer * count * elemBytes;
    r = p_ncclSend((const void *)(send + off), count, dt, peer, c, s);
    if (r != 0)
      break;
    r = p_ncclRecv((void *)(recv + off), count, dt, peer, c, s);
    if (r != 0)
      break;
  }
  ncclResult_t end = p_ncclGroupEnd();
  return r != 0 ? r : end;
}
