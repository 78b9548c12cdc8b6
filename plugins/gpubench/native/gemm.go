//go:build cgo && linux

package native

// #include "shim.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/gpuflow/gpuflow/plugins/gpubench/kernels"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// cudaDataType and cublasComputeType values.
const (
	cudaR32F    = 0
	cudaR16F    = 2
	cudaR16BF   = 14
	cudaR8FE4M3 = 28

	computeF32     = 68 // CUBLAS_COMPUTE_32F
	computeF32TF32 = 77 // CUBLAS_COMPUTE_32F_FAST_TF32

	descTransA     = 3 // CUBLASLT_MATMUL_DESC_TRANSA
	descTransB     = 4 // CUBLASLT_MATMUL_DESC_TRANSB
	opN            = 0
	opT            = 1
	prefMaxWSBytes = 1 // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
)

// gemmType says how one dtype maps onto cuBLASLt and the kernels.
type gemmType struct {
	in, out     int // cudaDataType of A and B, and of C and D
	compute     int
	inDT, outDT int // kernels.DT* of A/B and of D
	inBytes     int64
	outBytes    int64
	transA      bool // fp8 on Hopper needs A transposed (TN)
	maxRelErr   float64
	description string
}

var gemmTypes = map[string]gemmType{
	"bf16": {in: cudaR16BF, out: cudaR16BF, compute: computeF32, inDT: kernels.DTBF16, outDT: kernels.DTBF16,
		inBytes: 2, outBytes: 2, description: "bf16 in, bf16 out, fp32 accumulate"},
	"fp16": {in: cudaR16F, out: cudaR16F, compute: computeF32, inDT: kernels.DTF16, outDT: kernels.DTF16,
		inBytes: 2, outBytes: 2, description: "fp16 in, fp16 out, fp32 accumulate"},
	"tf32": {in: cudaR32F, out: cudaR32F, compute: computeF32TF32, inDT: kernels.DTF32, outDT: kernels.DTF32,
		inBytes: 4, outBytes: 4, description: "fp32 in and out, tf32 tensor cores"},
	"fp8": {in: cudaR8FE4M3, out: cudaR16BF, compute: computeF32, inDT: kernels.DTE4M3, outDT: kernels.DTBF16,
		inBytes: 1, outBytes: 2, transA: true, description: "e4m3 in (TN), bf16 out, fp32 accumulate"},
}

// gemmSamples is how many elements of D are recomputed to check a product.
const gemmSamples = 128

// GEMM implements node.Node.
func (n *Node) GEMM(ctx context.Context, spec node.GEMMSpec) ([]node.GEMMResult, error) {
	t, ok := gemmTypes[spec.DType]
	if !ok {
		return nil, fmt.Errorf("gemm: unknown dtype %q", spec.DType)
	}
	out := make([]node.GEMMResult, len(n.gpus))
	err := n.each(func(g *gpu) error {
		r, err := g.gemm(ctx, t, spec)
		out[g.index] = r
		return err
	})
	return out, err
}

// matmul holds one product's buffers and descriptors.
type matmul struct {
	g          *gpu
	spec       node.GEMMSpec
	t          gemmType
	a, b, d    buffer
	ws         buffer
	desc       C.cublasLtMatmulDesc_t
	al, bl, dl C.cublasLtMatrixLayout_t
}

func (g *gpu) gemm(ctx context.Context, t gemmType, spec node.GEMMSpec) (res node.GEMMResult, err error) {
	res.GPU = g.index
	mm, err := g.newMatmul(t, spec)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, mm.destroy()) }()
	cands, err := mm.heuristics()
	if err != nil {
		return res, err
	}
	best, err := mm.probe(ctx, cands)
	if err != nil {
		return res, err
	}
	res.Candidates = len(cands)
	if err := g.poison(mm.d, int64(spec.M)*int64(spec.N)*t.outBytes); err != nil {
		return res, err
	}
	// The probe is short, and a kernel fastest in a burst may not be under
	// the power cap of a long run: time the winner and cuBLASLt's own first
	// choice in full, and keep the faster.
	finalists := []int{best}
	if best != 0 {
		finalists = append(finalists, 0)
	}
	res.Seconds = math.Inf(1)
	for _, i := range finalists {
		for range max(spec.Repeats, 1) {
			if err := g.sync(); err != nil {
				return res, err
			}
			if err := rest(ctx, spec.RestSeconds); err != nil {
				return res, err
			}
			s, err := g.timedAfter(spec.Warmup, spec.WarmupSeconds, spec.Iters, func() error { return mm.run(&cands[i].algo) })
			if err != nil {
				return res, err
			}
			if s < res.Seconds {
				res.Seconds, res.Best = s, i
			}
		}
	}
	res.RelErr, err = mm.check()
	return res, err
}

// rest idles for seconds unless ctx ends first.
func rest(ctx context.Context, seconds float64) error {
	t := time.NewTimer(time.Duration(seconds * float64(time.Second)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// probeTarget is how long each candidate runs in the probe, at least.
const probeTarget = 100 * time.Millisecond

// probe times every candidate briefly and returns the fastest's index. A
// candidate that fails (cuBLASLt's estimate can be wrong) is passed over.
func (mm *matmul) probe(ctx context.Context, cands []C.cublasLtMatmulHeuristicResult_t) (int, error) {
	g, spec := mm.g, mm.spec
	iters := 3
	best, bestS := -1, math.Inf(1)
	var failures []error
	for i := range cands {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		s, err := g.timed(1, iters, func() error { return mm.run(&cands[i].algo) })
		if err != nil {
			failures = append(failures, fmt.Errorf("candidate %d: %w", i, err))
			continue
		}
		if best < 0 {
			// Size the probe from the first time measured.
			iters = min(max(3, int(math.Ceil(probeTarget.Seconds()/s))), max(spec.Iters, 3))
			if s, err = g.timed(0, iters, func() error { return mm.run(&cands[i].algo) }); err != nil {
				return 0, err
			}
		}
		if s < bestS {
			best, bestS = i, s
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("gemm %s %dx%dx%d: every heuristic candidate failed: %w",
			spec.DType, spec.M, spec.N, spec.K, errors.Join(failures...))
	}
	return best, nil
}

func (g *gpu) newMatmul(t gemmType, spec node.GEMMSpec) (*matmul, error) {
	if g.lt == nil {
		if err := ltCheck("cublasLtCreate", C.gf_cublasLtCreate(&g.lt)); err != nil {
			return nil, err
		}
	}
	m, n, k := int64(spec.M), int64(spec.N), int64(spec.K)
	mm := &matmul{g: g, spec: spec, t: t}
	bufs, err := g.allocAll(m*k*t.inBytes, k*n*t.inBytes, m*n*t.outBytes, spec.WorkspaceBytes)
	if err != nil {
		return nil, err
	}
	mm.a, mm.b, mm.d, mm.ws = bufs[0], bufs[1], bufs[2], bufs[3]
	if err := errors.Join(
		g.fillRandom(mm.a, t.inDT, m*k, spec.Seed),
		g.fillRandom(mm.b, t.inDT, k*n, spec.Seed+1),
		mm.describe(),
	); err != nil {
		return nil, errors.Join(err, mm.destroy())
	}
	return mm, nil
}

// describe sets up column-major layouts: op(A) is M×K (stored K×M and
// transposed when t.transA), B is K×N, D is M×N.
func (mm *matmul) describe() error {
	m, n, k := C.uint64_t(mm.spec.M), C.uint64_t(mm.spec.N), C.uint64_t(mm.spec.K)
	transA := C.int32_t(opN)
	aRows, aCols := m, k
	if mm.t.transA {
		transA, aRows, aCols = opT, k, m
	}
	return errors.Join(
		ltCheck("cublasLtMatmulDescCreate", C.gf_cublasLtMatmulDescCreate(&mm.desc, C.int(mm.t.compute), cudaR32F)),
		ltCheck("cublasLtMatmulDescSetAttribute(TRANSA)", C.gf_cublasLtMatmulDescSetInt32(mm.desc, descTransA, transA)),
		ltCheck("cublasLtMatmulDescSetAttribute(TRANSB)", C.gf_cublasLtMatmulDescSetInt32(mm.desc, descTransB, opN)),
		ltCheck("cublasLtMatrixLayoutCreate(A)", C.gf_cublasLtMatrixLayoutCreate(&mm.al, C.int(mm.t.in), aRows, aCols, C.int64_t(aRows))),
		ltCheck("cublasLtMatrixLayoutCreate(B)", C.gf_cublasLtMatrixLayoutCreate(&mm.bl, C.int(mm.t.in), k, n, C.int64_t(k))),
		ltCheck("cublasLtMatrixLayoutCreate(D)", C.gf_cublasLtMatrixLayoutCreate(&mm.dl, C.int(mm.t.out), m, n, C.int64_t(m))),
	)
}

// heuristics returns up to TopK candidates, cuBLASLt's best guess first.
func (mm *matmul) heuristics() (_ []C.cublasLtMatmulHeuristicResult_t, err error) {
	var pref C.cublasLtMatmulPreference_t
	if err := ltCheck("cublasLtMatmulPreferenceCreate", C.gf_cublasLtMatmulPreferenceCreate(&pref)); err != nil {
		return nil, err
	}
	defer func() {
		err = errors.Join(err, ltCheck("cublasLtMatmulPreferenceDestroy", C.gf_cublasLtMatmulPreferenceDestroy(pref)))
	}()
	if err := ltCheck("cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)",
		C.gf_cublasLtMatmulPreferenceSetUint64(pref, prefMaxWSBytes, C.uint64_t(mm.spec.WorkspaceBytes))); err != nil {
		return nil, err
	}
	results := make([]C.cublasLtMatmulHeuristicResult_t, max(mm.spec.TopK, 1))
	var got C.int
	if err := ltCheck("cublasLtMatmulAlgoGetHeuristic", C.gf_cublasLtMatmulAlgoGetHeuristic(mm.g.lt, mm.desc,
		mm.al, mm.bl, mm.dl, mm.dl, pref, C.int(len(results)), &results[0], &got)); err != nil {
		return nil, err
	}
	if got == 0 {
		return nil, fmt.Errorf("cublasLtMatmulAlgoGetHeuristic: no algorithm for %s (%s) %dx%dx%d",
			mm.spec.DType, mm.t.description, mm.spec.M, mm.spec.N, mm.spec.K)
	}
	return results[:got], nil
}

func (mm *matmul) run(algo *C.cublasLtMatmulAlgo_t) error {
	return ltCheck("cublasLtMatmul", C.gf_cublasLtMatmul(mm.g.lt, mm.desc,
		C.CUdeviceptr(mm.a), mm.al, C.CUdeviceptr(mm.b), mm.bl, C.CUdeviceptr(mm.d), mm.dl,
		algo, C.CUdeviceptr(mm.ws), C.size_t(mm.spec.WorkspaceBytes), mm.g.stream))
}

// check recomputes sampled elements of D in fp32 on the GPU and returns
// ‖D−ref‖/‖ref‖ over them; a NaN (an element never written) gives +Inf.
func (mm *matmul) check() (_ float64, err error) {
	g := mm.g
	pairs, err := g.alloc(gemmSamples * 2 * 4)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, g.free(pairs)) }()
	m, k := C.ulonglong(mm.spec.M), C.ulonglong(mm.spec.K)
	// Element (i, k) of op(A): A[i + k*M] plain, A[k + i*K] transposed.
	si, sk := C.ulonglong(1), m
	if mm.t.transA {
		si, sk = k, 1
	}
	if err := cuCheck("launch gemm_sample", C.gf_gemm_sample(g.fn[kernels.GEMMSample], gemmSamples, g.stream,
		C.CUdeviceptr(mm.a), C.int(mm.t.inDT), si, sk, C.CUdeviceptr(mm.b), C.int(mm.t.inDT), 1, k,
		C.CUdeviceptr(mm.d), C.int(mm.t.outDT), m, m, C.ulonglong(mm.spec.N), k,
		C.ulonglong(mm.spec.Seed+2), C.CUdeviceptr(pairs))); err != nil {
		return 0, err
	}
	if err := g.sync(); err != nil {
		return 0, err
	}
	var host [gemmSamples * 2]float32
	if err := cuCheck("cuMemcpyDtoH", C.gf_cuMemcpyDtoH(unsafe.Pointer(&host[0]), C.CUdeviceptr(pairs), C.size_t(len(host)*4))); err != nil {
		return 0, err
	}
	return relErr(host[:]), nil
}

// relErr is ‖got−want‖/‖want‖ over (got, want) pairs.
func relErr(pairs []float32) float64 {
	var num, den float64
	for i := 0; i+1 < len(pairs); i += 2 {
		got, want := float64(pairs[i]), float64(pairs[i+1])
		if math.IsNaN(got) {
			return math.Inf(1)
		}
		num += (got - want) * (got - want)
		den += want * want
	}
	if den == 0 {
		return math.Inf(1)
	}
	return math.Sqrt(num / den)
}

// destroy waits for the GPU and frees what newMatmul made.
func (mm *matmul) destroy() error {
	errs := []error{mm.g.sync()}
	if mm.desc != nil {
		errs = append(errs, ltCheck("cublasLtMatmulDescDestroy", C.gf_cublasLtMatmulDescDestroy(mm.desc)))
	}
	for _, l := range []C.cublasLtMatrixLayout_t{mm.al, mm.bl, mm.dl} {
		if l != nil {
			errs = append(errs, ltCheck("cublasLtMatrixLayoutDestroy", C.gf_cublasLtMatrixLayoutDestroy(l)))
		}
	}
	errs = append(errs, mm.g.free(mm.a, mm.b, mm.d, mm.ws))
	return errors.Join(errs...)
}
