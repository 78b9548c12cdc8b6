// The few NVIDIA library declarations gpuflow calls, written out here so
// that building needs no CUDA SDK. Each function is reached through a
// pointer that shim.c fills with dlsym; the gf_ wrappers are what Go calls.
#ifndef GPUFLOW_SHIM_H
#define GPUFLOW_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef int cublasStatus_t;
typedef struct cublasLtContext *cublasLtHandle_t;
typedef struct cublasLtMatmulDescOpaque *cublasLtMatmulDesc_t;
typedef struct cublasLtMatrixLayoutOpaque *cublasLtMatrixLayout_t;
typedef struct cublasLtMatmulPreferenceOpaque *cublasLtMatmulPreference_t;
typedef struct {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;
typedef struct {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

typedef int ncclResult_t;
typedef struct ncclComm *ncclComm_t;
typedef struct {
  char internal[128];
} ncclUniqueId;

// Libraries, as gf_load numbers them.
enum { GF_CUDA = 0, GF_NVML = 1, GF_CUBLASLT = 2, GF_NCCL = 3 };

// gf_load dlopens path as library lib and resolves its symbols. It returns
// 0, or -1 with a message in err.
int gf_load(int lib, const char *path, char *err, size_t errlen);

// Returned by a wrapper whose optional symbol the library lacks.
#define GF_MISSING_SYMBOL (-1000)

// ---- CUDA driver ----
CUresult gf_cuInit(unsigned int flags);
CUresult gf_cuDriverGetVersion(int *v);
CUresult gf_cuDeviceGetCount(int *n);
CUresult gf_cuDeviceGet(CUdevice *d, int ordinal);
CUresult gf_cuDeviceGetName(char *name, int len, CUdevice d);
CUresult gf_cuDeviceGetAttribute(int *v, int attrib, CUdevice d);
CUresult gf_cuDeviceTotalMem(size_t *bytes, CUdevice d);
CUresult gf_cuDeviceGetPCIBusId(char *id, int len, CUdevice d);
CUresult gf_cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer);
CUresult gf_cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d);
CUresult gf_cuDevicePrimaryCtxRelease(CUdevice d);
CUresult gf_cuCtxSetCurrent(CUcontext ctx);
CUresult gf_cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags);
CUresult gf_cuMemAlloc(CUdeviceptr *p, size_t bytes);
CUresult gf_cuMemFree(CUdeviceptr p);
CUresult gf_cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes);
CUresult gf_cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult gf_cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                              size_t bytes, CUstream s);
CUresult gf_cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s);
CUresult gf_cuStreamCreate(CUstream *s, unsigned int flags);
CUresult gf_cuStreamDestroy(CUstream s);
CUresult gf_cuStreamSynchronize(CUstream s);
CUresult gf_cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags);
CUresult gf_cuEventCreate(CUevent *e, unsigned int flags);
CUresult gf_cuEventDestroy(CUevent e);
CUresult gf_cuEventRecord(CUevent e, CUstream s);
CUresult gf_cuEventQuery(CUevent e);
CUresult gf_cuEventSynchronize(CUevent e);
CUresult gf_cuEventElapsedTime(float *ms, CUevent start, CUevent end);
CUresult gf_cuModuleUnload(CUmodule m);
CUresult gf_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
const char *gf_cuErrorString(CUresult r);
// gf_load_module JIT-compiles PTX, leaving the JIT's error log in log.
CUresult gf_load_module(CUmodule *m, const char *ptx, char *log, size_t loglen);

// Kernel launchers, one per kernel of plugins/gpubench/kernels.
CUresult gf_fill_random(CUfunction f, unsigned grid, CUstream s, CUdeviceptr out, int dt,
                        unsigned long long n, unsigned long long seed);
CUresult gf_count_random_wrong(CUfunction f, unsigned grid, CUstream s, CUdeviceptr buf, int dt,
                               unsigned long long n, unsigned long long seed, CUdeviceptr wrong);
CUresult gf_triad(CUfunction f, unsigned grid, CUstream s, CUdeviceptr a, CUdeviceptr b,
                  CUdeviceptr c, float scalar, unsigned long long n4);
CUresult gf_count_triad_wrong(CUfunction f, unsigned grid, CUstream s, CUdeviceptr a,
                              CUdeviceptr b, CUdeviceptr c, float scalar, unsigned long long n,
                              CUdeviceptr wrong);
CUresult gf_fill_pattern(CUfunction f, unsigned grid, CUstream s, CUdeviceptr out, int dt,
                         unsigned long long n, unsigned long long offset, int rank);
CUresult gf_check_pattern(CUfunction f, unsigned grid, CUstream s, CUdeviceptr buf, int dt,
                          unsigned long long n, int mode, int rank, int nranks, int root,
                          unsigned long long count, CUdeviceptr wrong);
CUresult gf_gemm_sample(CUfunction f, unsigned samples, CUstream s, CUdeviceptr a, int a_dt,
                        unsigned long long a_si, unsigned long long a_sk, CUdeviceptr b, int b_dt,
                        unsigned long long b_sk, unsigned long long b_sj, CUdeviceptr d, int d_dt,
                        unsigned long long ldd, unsigned long long m, unsigned long long n,
                        unsigned long long k, unsigned long long seed, CUdeviceptr pairs);

// ---- NVML ----
nvmlReturn_t gf_nvmlInit(void);
nvmlReturn_t gf_nvmlShutdown(void);
const char *gf_nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t gf_nvmlSystemGetDriverVersion(char *v, unsigned int len);
nvmlReturn_t gf_nvmlDeviceGetHandleByPciBusId(const char *bus, nvmlDevice_t *d);
nvmlReturn_t gf_nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int len);
nvmlReturn_t gf_nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int len);
nvmlReturn_t gf_nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);
nvmlReturn_t gf_nvmlDeviceGetEccMode(nvmlDevice_t d, int *current, int *pending);
nvmlReturn_t gf_nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int errorType, int counterType,
                                            unsigned long long *count);
nvmlReturn_t gf_nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr, unsigned int *unc,
                                          unsigned int *pending, unsigned int *failed);
nvmlReturn_t gf_nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned int *count,
                                          unsigned long long *addresses);
nvmlReturn_t gf_nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *active);
nvmlReturn_t gf_nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v);
nvmlReturn_t gf_nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v);
nvmlReturn_t gf_nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v);
nvmlReturn_t gf_nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v);
nvmlReturn_t gf_nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *v);
nvmlReturn_t gf_nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw);
nvmlReturn_t gf_nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw);
nvmlReturn_t gf_nvmlDeviceGetClockEventReasons(nvmlDevice_t d, unsigned long long *reasons);

// ---- cuBLASLt ----
size_t gf_cublasLtGetVersion(void);
const char *gf_cublasLtGetStatusName(cublasStatus_t s);
cublasStatus_t gf_cublasLtCreate(cublasLtHandle_t *h);
cublasStatus_t gf_cublasLtDestroy(cublasLtHandle_t h);
cublasStatus_t gf_cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, int computeType,
                                           int scaleType);
cublasStatus_t gf_cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d);
cublasStatus_t gf_cublasLtMatmulDescSetInt32(cublasLtMatmulDesc_t d, int attr, int32_t v);
cublasStatus_t gf_cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, int type, uint64_t rows,
                                             uint64_t cols, int64_t ld);
cublasStatus_t gf_cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l);
cublasStatus_t gf_cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p);
cublasStatus_t gf_cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p);
cublasStatus_t gf_cublasLtMatmulPreferenceSetUint64(cublasLtMatmulPreference_t p, int attr,
                                                    uint64_t v);
cublasStatus_t gf_cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                                 cublasLtMatrixLayout_t a,
                                                 cublasLtMatrixLayout_t b,
                                                 cublasLtMatrixLayout_t c,
                                                 cublasLtMatrixLayout_t dl,
                                                 cublasLtMatmulPreference_t p, int requested,
                                                 cublasLtMatmulHeuristicResult_t *results,
                                                 int *returned);
// gf_cublasLtMatmul computes D = A*B (alpha 1, beta 0, C = D).
cublasStatus_t gf_cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, CUdeviceptr a,
                                 cublasLtMatrixLayout_t al, CUdeviceptr b,
                                 cublasLtMatrixLayout_t bl, CUdeviceptr d,
                                 cublasLtMatrixLayout_t dl, const cublasLtMatmulAlgo_t *algo,
                                 CUdeviceptr ws, size_t wsBytes, CUstream s);

// ---- NCCL ----
ncclResult_t gf_ncclGetVersion(int *v);
const char *gf_ncclGetErrorString(ncclResult_t r);
const char *gf_ncclGetLastError(ncclComm_t c);
ncclResult_t gf_ncclGetUniqueId(ncclUniqueId *id);
// gf_ncclCommInitRank passes *id by value, as NCCL's ABI wants.
ncclResult_t gf_ncclCommInitRank(ncclComm_t *c, int nranks, const ncclUniqueId *id, int rank);
ncclResult_t gf_ncclCommDestroy(ncclComm_t c);
ncclResult_t gf_ncclCommAbort(ncclComm_t c);
ncclResult_t gf_ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *r);
ncclResult_t gf_ncclGroupStart(void);
ncclResult_t gf_ncclGroupEnd(void);
ncclResult_t gf_ncclAllReduce(CUdeviceptr send, CUdeviceptr recv, size_t count, int dt, int op,
                              ncclComm_t c, CUstream s);
ncclResult_t gf_ncclAllGather(CUdeviceptr send, CUdeviceptr recv, size_t sendcount, int dt,
                              ncclComm_t c, CUstream s);
ncclResult_t gf_ncclReduceScatter(CUdeviceptr send, CUdeviceptr recv, size_t recvcount, int dt,
                                  int op, ncclComm_t c, CUstream s);
ncclResult_t gf_ncclBroadcast(CUdeviceptr send, CUdeviceptr recv, size_t count, int dt, int root,
                              ncclComm_t c, CUstream s);
// gf_ncclAlltoall exchanges count elements with every rank in one group
// of sends and receives.
ncclResult_t gf_ncclAlltoall(CUdeviceptr send, CUdeviceptr recv, size_t count, size_t elemBytes,
                             int dt, int nranks, ncclComm_t c, CUstream s);

#endif
