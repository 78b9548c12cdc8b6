package node

import "fmt"

// Op is an NCCL collective.
type Op string

// The collectives the benchmark runs.
const (
	AllReduce     Op = "all_reduce"
	AllGather     Op = "all_gather"
	ReduceScatter Op = "reduce_scatter"
	Alltoall      Op = "alltoall"
	Broadcast     Op = "broadcast"
)

// Ops lists every supported collective in the order they run.
var Ops = []Op{AllReduce, AllGather, ReduceScatter, Alltoall, Broadcast}

// Valid reports whether o is one of Ops.
func (o Op) Valid() bool {
	for _, x := range Ops {
		if x == o {
			return true
		}
	}
	return false
}

// SupportsInPlace says whether NCCL has an in-place form of o. Alltoall is
// grouped point-to-point calls, whose buffers may not alias.
func (o Op) SupportsInPlace() bool { return o != Alltoall }

// BusFactor is nccl-tests' ratio of bus bandwidth to algorithm bandwidth
// for n ranks: what each rank's busiest link must carry relative to S/t,
// so that the figure is comparable across rank counts.
func (o Op) BusFactor(n int) float64 {
	nn := float64(n)
	switch o {
	case AllReduce:
		return 2 * (nn - 1) / nn
	case AllGather, ReduceScatter, Alltoall:
		return (nn - 1) / nn
	default:
		return 1
	}
}

// Layout is how many elements each rank's buffers hold for one collective.
type Layout struct {
	// Bytes is the size as nccl-tests counts it, after rounding the
	// requested size down to whole elements (and whole per-rank chunks).
	Bytes int64 `json:"bytes"`
	// SendElems and RecvElems size each rank's buffers.
	SendElems int64 `json:"send_elems"`
	RecvElems int64 `json:"recv_elems"`
	// Count is the count argument passed to NCCL (per peer for alltoall).
	Count int64 `json:"count"`
}

// Layout sizes a collective of bytes (counted as nccl-tests does: the
// whole buffer for all_reduce and broadcast; the whole gathered, scattered
// or exchanged buffer for all_gather, reduce_scatter and alltoall) over n
// ranks with elements of elemSize bytes.
func (o Op) Layout(bytes int64, elemSize, n int) (Layout, error) {
	if n < 1 || elemSize < 1 {
		return Layout{}, fmt.Errorf("%s needs at least one rank and a positive element size", o)
	}
	total := bytes / int64(elemSize)
	switch o {
	case AllReduce, Broadcast:
		if total < 1 {
			return Layout{}, fmt.Errorf("%s of %d bytes holds no %d-byte element", o, bytes, elemSize)
		}
		return Layout{Bytes: total * int64(elemSize), SendElems: total, RecvElems: total, Count: total}, nil
	case AllGather, ReduceScatter, Alltoall:
		chunk := total / int64(n)
		if chunk < 1 {
			return Layout{}, fmt.Errorf("%s of %d bytes over %d ranks leaves no %d-byte element a rank", o, bytes, n, elemSize)
		}
		l := Layout{Bytes: chunk * int64(n) * int64(elemSize), Count: chunk}
		switch o {
		case AllGather:
			l.SendElems, l.RecvElems = chunk, chunk*int64(n)
		case ReduceScatter:
			l.SendElems, l.RecvElems = chunk*int64(n), chunk
		default:
			l.SendElems, l.RecvElems = chunk*int64(n), chunk*int64(n)
		}
		return l, nil
	}
	return Layout{}, fmt.Errorf("unknown collective %q", o)
}

// Bandwidth returns nccl-tests' algbw and busbw in bytes per second for a
// collective of layout bytes that took seconds over n ranks.
func (o Op) Bandwidth(bytes int64, seconds float64, n int) (algbw, busbw float64) {
	if seconds <= 0 {
		return 0, 0
	}
	algbw = float64(bytes) / seconds
	return algbw, algbw * o.BusFactor(n)
}

// ElemSize is the width in bytes of a collective or GEMM data type, or 0
// when unknown.
func ElemSize(dtype string) int {
	switch dtype {
	case "fp32", "tf32":
		return 4
	case "bf16", "fp16":
		return 2
	case "fp8":
		return 1
	}
	return 0
}
