//go:build cgo && linux

package native

// #include "shim.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/gpuflow/gpuflow/plugins/gpubench/kernels"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// ncclDataType_t values and ncclSum.
var ncclTypes = map[string]struct{ nccl, dt int }{
	"fp16": {6, kernels.DTF16},
	"fp32": {7, kernels.DTF32},
	"bf16": {9, kernels.DTBF16},
}

const ncclSum = 0

// comms is one communicator per GPU, all of one clique, and each GPU's
// buffers, kept across calls and grown as sizes grow.
type comms struct {
	comm   []C.ncclComm_t
	bufs   []collBuffers
	broken error // set once a hang aborted the communicators
}

type collBuffers struct {
	send, recv   buffer
	sendB, recvB int64
	wrong        *counter
}

// ensureComms creates the communicators on first use: one unique id (node
// 0's, shared through the bootstrap in a job of several nodes), then
// ncclCommInitRank with each GPU's global rank for every GPU inside one
// group, from one thread (worker 0's), each with its GPU's context current.
func (n *Node) ensureComms() (*comms, error) {
	if n.nccl != nil {
		return n.nccl, n.nccl.broken
	}
	c := &comms{comm: make([]C.ncclComm_t, len(n.gpus)), bufs: make([]collBuffers, len(n.gpus))}
	id, err := n.uniqueID()
	if err != nil {
		return nil, err
	}
	err = n.gpus[0].w.do(func() error {
		if err := ncclCheck("ncclGroupStart", C.gf_ncclGroupStart(), nil); err != nil {
			return err
		}
		var errs []error
		for _, g := range n.gpus {
			rank := n.rank(g)
			errs = append(errs,
				cuCheck("cuCtxSetCurrent", C.gf_cuCtxSetCurrent(g.ctx)),
				ncclCheck(fmt.Sprintf("ncclCommInitRank(rank %d of %d)", rank, n.ranks()),
					C.gf_ncclCommInitRank(&c.comm[g.index], C.int(n.ranks()), &id, C.int(rank)), nil))
		}
		errs = append(errs,
			ncclCheck("ncclGroupEnd", C.gf_ncclGroupEnd(), nil),
			cuCheck("cuCtxSetCurrent", C.gf_cuCtxSetCurrent(n.gpus[0].ctx)))
		return errors.Join(errs...)
	})
	if err != nil {
		return nil, err
	}
	if err := n.each(func(g *gpu) error {
		b, err := g.alloc(8)
		c.bufs[g.index].wrong = &counter{g: g, buf: b}
		return err
	}); err != nil {
		return nil, errors.Join(err, c.destroyOn(n))
	}
	n.nccl = c
	return c, nil
}

// uniqueID makes the communicator's id: ncclGetUniqueId on a single node
// or node 0 of a job, node 0's id through the bootstrap elsewhere.
func (n *Node) uniqueID() (C.ncclUniqueId, error) {
	var id C.ncclUniqueId
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&id)), unsafe.Sizeof(id))
	if n.boot == nil || n.boot.NodeRank == 0 {
		if err := ncclCheck("ncclGetUniqueId", C.gf_ncclGetUniqueId(&id), nil); err != nil {
			return id, err
		}
	}
	if n.boot == nil {
		return id, nil
	}
	var mine []byte
	if n.boot.NodeRank == 0 {
		mine = raw
	}
	shared, err := n.boot.ShareID(mine)
	if err != nil {
		return id, err
	}
	if len(shared) != len(raw) {
		return id, fmt.Errorf("the shared NCCL id has %d bytes, not %d", len(shared), len(raw))
	}
	copy(raw, shared)
	return id, nil
}

// ranks is the communicator's size: every GPU of every node.
func (n *Node) ranks() int {
	if n.boot == nil {
		return len(n.gpus)
	}
	return n.boot.Nodes * len(n.gpus)
}

// rank is g's rank in the communicator.
func (n *Node) rank(g *gpu) int {
	if n.boot == nil {
		return g.index
	}
	return n.boot.NodeRank*len(n.gpus) + g.index
}

// Collective implements node.Node.
func (n *Node) Collective(ctx context.Context, spec node.CollectiveSpec) (node.CollectiveResult, error) {
	res := node.CollectiveResult{}
	t, ok := ncclTypes[spec.DType]
	if !ok {
		return res, fmt.Errorf("nccl: unsupported dtype %q (bf16, fp16, fp32)", spec.DType)
	}
	if spec.InPlace && !spec.Op.SupportsInPlace() {
		return res, fmt.Errorf("nccl: %s has no in-place form", spec.Op)
	}
	elem := node.ElemSize(spec.DType)
	layout, err := spec.Op.Layout(spec.Bytes, elem, n.ranks())
	if err != nil {
		return res, err
	}
	res.Layout, res.Ranks = layout, n.ranks()
	if n.boot != nil {
		// Every rank of every node must run the same count; each node's
		// own warm-up would stretch its batch differently.
		spec.MinSeconds = 0
	}
	c, err := n.ensureComms()
	if err != nil {
		return res, err
	}
	run := &collRun{n: n, c: c, spec: spec, layout: layout, elem: int64(elem), nccl: t.nccl, dt: t.dt}
	if err := n.each(run.prepare); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	// One checked run, then warm-up and timed runs.
	if _, _, err := run.parallel(1, false); err != nil {
		return res, err
	}
	if res.Wrong, err = run.wrong(); err != nil {
		return res, err
	}
	warm, _, err := run.parallel(spec.Warmup, spec.MinSeconds > 0)
	if err != nil {
		return res, err
	}
	res.Iters = batchIters(spec, warm)
	secs, perGPU, err := run.parallel(res.Iters, true)
	res.Seconds = secs / float64(res.Iters)
	for _, s := range perGPU {
		res.RankSeconds = append(res.RankSeconds, s/float64(res.Iters))
	}
	return res, err
}

// maxIters bounds a timed batch stretched to spec.MinSeconds.
const maxIters = 100000

// batchIters is spec.Iters, or more when the warm-up (warmSeconds for
// spec.Warmup runs) says a batch of Iters would end before MinSeconds.
func batchIters(spec node.CollectiveSpec, warmSeconds float64) int {
	iters := max(spec.Iters, 1)
	if spec.MinSeconds <= 0 || spec.Warmup == 0 || warmSeconds <= 0 {
		return iters
	}
	per := warmSeconds / float64(spec.Warmup)
	return min(max(iters, int(math.Ceil(spec.MinSeconds/per))), maxIters)
}

// collRun is one collective at one size.
type collRun struct {
	n      *Node
	c      *comms
	spec   node.CollectiveSpec
	layout node.Layout
	elem   int64
	nccl   int
	dt     int
}

// buffers returns the send and receive pointers of rank g, aliased as NCCL
// defines in-place operation.
func (r *collRun) buffers(g *gpu) (send, recv buffer) {
	b := r.c.bufs[g.index]
	if !r.spec.InPlace {
		return b.send, b.recv
	}
	rank := int64(r.n.rank(g))
	switch r.spec.Op {
	case node.AllGather:
		return b.recv + buffer(rank*r.layout.Count*r.elem), b.recv
	case node.ReduceScatter:
		return b.send, b.send + buffer(rank*r.layout.Count*r.elem)
	default:
		return b.recv, b.recv
	}
}

// prepare grows g's buffers as needed, poisons the receive buffer and
// writes the rank's pattern into the send buffer (after the poison, so
// that in-place send regions inside the receive buffer keep it).
func (r *collRun) prepare(g *gpu) error {
	b := &r.c.bufs[g.index]
	sendB, recvB := r.layout.SendElems*r.elem, r.layout.RecvElems*r.elem
	if r.spec.InPlace {
		recvB, sendB = max(sendB, recvB), 0
		if r.spec.Op == node.ReduceScatter {
			sendB, recvB = recvB, 0
		}
	}
	if err := g.grow(&b.send, &b.sendB, sendB); err != nil {
		return err
	}
	if err := g.grow(&b.recv, &b.recvB, recvB); err != nil {
		return err
	}
	send, recv := r.buffers(g)
	return errors.Join(
		g.poison(recv, r.layout.RecvElems*r.elem),
		cuCheck("launch fill_pattern", C.gf_fill_pattern(g.fn[kernels.FillPattern], g.grid(r.layout.SendElems),
			g.stream, C.CUdeviceptr(send), C.int(r.dt), C.ulonglong(r.layout.SendElems), 0, C.int(r.n.rank(g)))),
		b.wrong.reset(),
		g.sync())
}

// grow makes *buf hold at least want bytes.
func (g *gpu) grow(buf *buffer, have *int64, want int64) error {
	if want <= *have {
		return nil
	}
	if err := errors.Join(g.sync(), g.free(*buf)); err != nil {
		return err
	}
	*buf, *have = 0, 0
	b, err := g.alloc(want)
	if err != nil {
		return err
	}
	*buf, *have = b, want
	return nil
}

var checkModes = map[node.Op]int{
	node.AllReduce:     kernels.ModeAllReduce,
	node.AllGather:     kernels.ModeAllGather,
	node.ReduceScatter: kernels.ModeReduceScatter,
	node.Alltoall:      kernels.ModeAlltoall,
	node.Broadcast:     kernels.ModeBroadcast,
}

// wrong counts, over every rank, the received elements that differ from
// the exact result.
func (r *collRun) wrong() (int64, error) {
	counts := make([]int64, len(r.n.gpus))
	err := r.n.each(func(g *gpu) (err error) {
		_, recv := r.buffers(g)
		w := r.c.bufs[g.index].wrong
		if err := cuCheck("launch check_pattern", C.gf_check_pattern(g.fn[kernels.CheckPattern],
			g.grid(r.layout.RecvElems), g.stream, C.CUdeviceptr(recv), C.int(r.dt), C.ulonglong(r.layout.RecvElems),
			C.int(checkModes[r.spec.Op]), C.int(r.n.rank(g)), C.int(r.n.ranks()), 0,
			C.ulonglong(r.layout.Count), C.CUdeviceptr(w.buf))); err != nil {
			return err
		}
		counts[g.index], err = w.read()
		return err
	})
	var total int64
	for _, c := range counts {
		total += c
	}
	return total, err
}

// launch enqueues one collective on g's stream.
func (r *collRun) launch(g *gpu) error {
	send, recv := r.buffers(g)
	comm := r.c.comm[g.index]
	s, d := C.CUdeviceptr(send), C.CUdeviceptr(recv)
	count, dt := C.size_t(r.layout.Count), C.int(r.nccl)
	call := "nccl" + string(r.spec.Op)
	var ret C.ncclResult_t
	switch r.spec.Op {
	case node.AllReduce:
		ret = C.gf_ncclAllReduce(s, d, count, dt, ncclSum, comm, g.stream)
	case node.AllGather:
		ret = C.gf_ncclAllGather(s, d, count, dt, comm, g.stream)
	case node.ReduceScatter:
		ret = C.gf_ncclReduceScatter(s, d, count, dt, ncclSum, comm, g.stream)
	case node.Alltoall:
		ret = C.gf_ncclAlltoall(s, d, count, C.size_t(r.elem), dt, C.int(r.n.ranks()), comm, g.stream)
	case node.Broadcast:
		ret = C.gf_ncclBroadcast(s, d, count, dt, 0, comm, g.stream)
	default:
		return fmt.Errorf("unknown collective %q", r.spec.Op)
	}
	return ncclCheck(call, ret, comm)
}

// parallel has every GPU's worker enqueue iters collectives at once (NCCL
// needs every rank to call), each bracketed by its own events, and waits
// for all with the spec's timeout. It returns the slowest GPU's seconds and
// each GPU's. On timeout it aborts the communicators and returns a
// *node.HungError.
func (r *collRun) parallel(iters int, timedRun bool) (float64, []float64, error) {
	n := len(r.n.gpus)
	abort := make(chan struct{})
	ready := sync.WaitGroup{}
	ready.Add(n)
	secs := make([]float64, n)
	done := make([]<-chan error, n)
	for i, g := range r.n.gpus {
		done[i] = g.w.start(func() error {
			t, err := g.newTimer()
			if err != nil {
				ready.Done()
				return err
			}
			defer t.destroy()
			ready.Done()
			ready.Wait() // start together: the first rank's clock must not run while the last is launching
			if timedRun {
				// One untimed collective first: it ends on every rank only
				// once the last rank (on any node) has joined, so every
				// clock starts when all ranks can work. Without it a rank
				// that launched early timed its wait for the others, which
				// read as a straggler at small sizes. The correctness run
				// (not timed) must see exactly one collective, so it skips this.
				if err := r.launch(g); err != nil {
					return err
				}
			}
			if err := t.begin(g.stream); err != nil {
				return err
			}
			for range iters {
				if err := r.launch(g); err != nil {
					return err
				}
			}
			if err := t.finish(g.stream); err != nil {
				return err
			}
			finished, err := t.wait(abort)
			if err != nil || !finished {
				return err
			}
			if timedRun {
				secs[g.index], err = t.seconds()
			}
			return err
		})
	}
	errs, waiting := r.await(done, abort)
	if len(waiting) > 0 {
		return 0, nil, r.c.broken
	}
	if err := errors.Join(errs...); err != nil {
		return 0, nil, err
	}
	var slowest float64
	for _, s := range secs {
		slowest = max(slowest, s)
	}
	return slowest, secs, nil
}

// abortGrace is how long ranks get to return after ncclCommAbort.
const abortGrace = 10 * time.Second

// await collects every worker's result until the timeout. Then it closes
// abort (ending the ranks' polling), aborts the communicators (ending
// ranks stuck inside NCCL), waits a little for the ranks to return, and
// names the GPUs that had not finished.
func (r *collRun) await(done []<-chan error, abort chan struct{}) ([]error, []int) {
	type result struct {
		gpu int
		err error
	}
	results := make(chan result, len(done))
	for i, d := range done {
		go func() { results <- result{i, <-d} }()
	}
	timeout := r.spec.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	deadline := time.After(timeout)
	errs := make([]error, len(done))
	pending := map[int]bool{}
	for i := range done {
		pending[i] = true
	}
	for len(pending) > 0 {
		select {
		case res := <-results:
			if res.err != nil {
				errs[res.gpu] = fmt.Errorf("GPU %d: %w", res.gpu, res.err)
			}
			delete(pending, res.gpu)
		case <-deadline:
			var waiting []int
			for i := range done {
				if pending[i] {
					waiting = append(waiting, i)
				}
			}
			close(abort)
			r.c.broken = errors.Join(&node.HungError{Spec: r.spec, Waiting: waiting}, r.c.abort())
			r.n.wedged = !drain(results, len(pending), abortGrace)
			return errs, waiting
		}
	}
	return errs, nil
}

// drain waits up to grace for count more results; it reports whether all
// came.
func drain[T any](results <-chan T, count int, grace time.Duration) bool {
	limit := time.After(grace)
	for range count {
		select {
		case <-results:
		case <-limit:
			return false
		}
	}
	return true
}

// abort calls ncclCommAbort on every communicator, which also unblocks
// ranks stuck inside NCCL.
func (c *comms) abort() error {
	var errs []error
	for i, comm := range c.comm {
		if comm != nil {
			errs = append(errs, ncclCheck(fmt.Sprintf("ncclCommAbort(rank %d)", i), C.gf_ncclCommAbort(comm), nil))
			c.comm[i] = nil
		}
	}
	return errors.Join(errs...)
}

// destroyOn frees the buffers on each GPU and destroys the communicators.
func (c *comms) destroyOn(n *Node) error {
	errs := []error{n.each(func(g *gpu) error {
		b := c.bufs[g.index]
		return errors.Join(g.sync(), g.free(b.send, b.recv, b.wrong.bufOrZero()))
	})}
	for i, comm := range c.comm {
		if comm != nil {
			errs = append(errs, ncclCheck(fmt.Sprintf("ncclCommDestroy(rank %d)", i), C.gf_ncclCommDestroy(comm), comm))
		}
	}
	return errors.Join(errs...)
}
