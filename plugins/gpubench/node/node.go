package node

import (
	"context"
	"fmt"
	"time"
)

// Node drives every visible GPU of one machine. Each measuring method runs
// its work on all GPUs at once, one OS thread per GPU, and returns one
// result per GPU (or per GPU pair), ordered by GPU index.
type Node interface {
	// GPUs lists the visible GPUs in CUDA's order.
	GPUs() []GPU
	// Versions reports the software stack in use.
	Versions() Versions
	// Health reads each GPU's state through NVML.
	Health(ctx context.Context) ([]Health, error)
	// GEMM times one matrix product on every GPU.
	GEMM(ctx context.Context, spec GEMMSpec) ([]GEMMResult, error)
	// HBM times a device-to-device copy and a triad on every GPU.
	HBM(ctx context.Context, spec HBMSpec) ([]HBMResult, error)
	// P2P times copy-engine copies between every ordered pair of GPUs.
	P2P(ctx context.Context, spec P2PSpec) ([]P2PResult, error)
	// Collective checks and times one NCCL collective across all GPUs. A
	// collective that outlives spec.Timeout is aborted and reported as a
	// *HungError; the node cannot run collectives after that.
	Collective(ctx context.Context, spec CollectiveSpec) (CollectiveResult, error)
	// Close frees every resource.
	Close() error
}

// GPU identifies one device.
type GPU struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	UUID              string `json:"uuid,omitempty"`
	BusID             string `json:"bus_id"`
	MemoryBytes       int64  `json:"memory_bytes"`
	ComputeCapability string `json:"compute_capability"`
	Multiprocessors   int    `json:"multiprocessors"`
}

// Versions of the software the node uses; empty when a library was not
// loaded.
type Versions struct {
	Driver   string `json:"driver"`
	CUDA     string `json:"cuda"`
	NCCL     string `json:"nccl,omitempty"`
	CuBLASLt string `json:"cublaslt,omitempty"`
	// Libraries maps each loaded library to the file it came from.
	Libraries map[string]string `json:"libraries"`
}

// GEMMSpec is one matrix product D = op(A)·B of M×K by K×N.
type GEMMSpec struct {
	DType   string // "bf16", "fp16", "tf32", "fp8"
	M, N, K int
	// TopK is how many of cuBLASLt's heuristic candidates to time; the
	// fastest is kept.
	TopK          int
	Warmup, Iters int
	// WarmupSeconds keeps the warm-up going at least this long, so that
	// timing starts with clocks settled under the power cap.
	WarmupSeconds float64
	// RestSeconds is how long the GPU idles before each timed run, so that
	// the probe's load does not bias it and every run starts alike.
	RestSeconds float64
	// Repeats is how many times each finalist is timed (each after its
	// rest and warm-up); the fastest counts.
	Repeats        int
	WorkspaceBytes int64
	Seed           uint64
}

// FLOP is the operation count of one product.
func (s GEMMSpec) FLOP() float64 { return 2 * float64(s.M) * float64(s.N) * float64(s.K) }

// GEMMResult is the best candidate's timing on one GPU.
type GEMMResult struct {
	GPU int
	// Seconds is the median time of one product.
	Seconds float64
	// Candidates is how many heuristic candidates were timed, Best the
	// index of the kept one in cuBLASLt's order.
	Candidates, Best int
	// RelErr is ‖D−ref‖/‖ref‖ over sampled elements recomputed in fp32.
	RelErr float64
}

// HBMSpec sizes the memory test: a copy of Bytes, then a triad whose three
// arrays share the copy's 2·Bytes of memory.
type HBMSpec struct {
	Bytes         int64
	Warmup, Iters int
}

// TriadArrayBytes is the size of each triad array: a third of the copy's
// memory, in whole 64-byte lines.
func (s HBMSpec) TriadArrayBytes() int64 { return 2 * s.Bytes / 3 / 64 * 64 }

// HBMResult holds one GPU's times; bytes moved are computed by the caller.
type HBMResult struct {
	GPU         int
	CopySeconds float64 // one copy of Bytes
	// TriadSeconds is one a = b + s·c over arrays of TriadArrayBytes.
	TriadSeconds float64
	// Wrong counts 32-bit words of the copy and elements of the triad that
	// differ from what they must be.
	Wrong int64
}

// P2PSpec sizes the peer copies.
type P2PSpec struct {
	Bytes         int64
	Warmup, Iters int
}

// P2PResult is one ordered GPU pair.
type P2PResult struct {
	Src, Dst int
	// PeerAccess says whether the pair could enable direct peer access
	// (else the driver stages the copy through the host).
	PeerAccess bool
	// OneWaySeconds is one copy of Bytes from Src to Dst alone.
	OneWaySeconds float64
	// BidirSeconds is one copy each way at once (set on Src < Dst only).
	BidirSeconds float64
	Wrong        int64
}

// CollectiveSpec is one collective at one size.
type CollectiveSpec struct {
	Op      Op
	DType   string // "bf16", "fp16", "fp32"
	Bytes   int64  // size as nccl-tests counts it (see Op.Layout)
	InPlace bool
	Warmup  int
	Iters   int
	// MinSeconds stretches the timed batch to last about this long: more
	// than Iters runs when one is short, as the warm-up predicts.
	MinSeconds float64
	Timeout    time.Duration
}

// CollectiveResult is the time of one collective and its check.
type CollectiveResult struct {
	Layout Layout
	// Ranks is the communicator's size: every GPU of every node of a job.
	Ranks int
	// Seconds is the time of one collective: the slowest GPU's average.
	Seconds float64
	// RankSeconds is each local GPU's average, by GPU index: what
	// straggler detection compares across ranks.
	RankSeconds []float64
	// Iters is how many timed runs that average is over.
	Iters int
	// Wrong counts elements, summed over ranks, that differ from the exact
	// expected value after one checked run.
	Wrong int64
}

// HungError reports a collective that did not finish within its timeout;
// the node has aborted its communicators.
type HungError struct {
	Spec    CollectiveSpec
	Waiting []int // GPUs whose work had not completed
}

func (e *HungError) Error() string {
	place := "out-of-place"
	if e.Spec.InPlace {
		place = "in-place"
	}
	return fmt.Sprintf("nccl %s %s of %d bytes (%s) hung: no completion on GPUs %v within %s; communicators aborted with ncclCommAbort",
		e.Spec.Op, e.Spec.DType, e.Spec.Bytes, place, e.Waiting, e.Spec.Timeout)
}
