//go:build cgo && linux

package native

// #include "shim.h"
import "C"

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpuflow/gpuflow/plugins/gpubench/kernels"
	"github.com/gpuflow/gpuflow/plugins/gpubench/node"
)

// cudaErrorPeerAccessAlreadyEnabled is what enabling twice returns.
const cudaErrorPeerAccessAlreadyEnabled = 704

// p2pBuffers are one GPU's source (filled with its own seed) and
// destination for peer copies, and its wrong-element counter.
type p2pBuffers struct {
	src, dst buffer
	wrong    *counter
}

func p2pSeed(gpu int) uint64 { return 100 + uint64(gpu) }

// P2P implements node.Node: every ordered pair alone one way, then every
// unordered pair both ways at once, each checked exactly.
func (n *Node) P2P(ctx context.Context, spec node.P2PSpec) (_ []node.P2PResult, err error) {
	if len(n.gpus) < 2 {
		return nil, fmt.Errorf("p2p needs at least 2 GPUs, this machine shows %d", len(n.gpus))
	}
	if spec.Bytes <= 0 || spec.Bytes%4 != 0 {
		return nil, fmt.Errorf("p2p: copy size %d bytes is not a positive multiple of 4", spec.Bytes)
	}
	bufs := make([]p2pBuffers, len(n.gpus))
	defer func() {
		err = errors.Join(err, n.each(func(g *gpu) error {
			b := bufs[g.index]
			return errors.Join(g.sync(), g.free(b.src, b.dst, b.wrong.bufOrZero()))
		}))
	}()
	access := make([][]bool, len(n.gpus))
	if err := n.each(func(g *gpu) (err error) {
		access[g.index], err = n.enablePeers(g)
		if err != nil {
			return err
		}
		bufs[g.index], err = g.p2pBuffers(spec.Bytes)
		return err
	}); err != nil {
		return nil, err
	}
	var out []node.P2PResult
	for src := range n.gpus {
		for dst := range n.gpus {
			if src == dst {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r, err := n.oneWay(spec, bufs, src, dst)
			if err != nil {
				return nil, fmt.Errorf("p2p GPU %d -> GPU %d: %w", src, dst, err)
			}
			r.PeerAccess = access[src][dst]
			out = append(out, r)
		}
	}
	index := map[[2]int]int{}
	for i, r := range out {
		index[[2]int{r.Src, r.Dst}] = i
	}
	for i := range out {
		r := &out[i]
		if r.Src > r.Dst {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		secs, atSrc, atDst, err := n.bothWays(spec, bufs, r.Src, r.Dst)
		if err != nil {
			return nil, fmt.Errorf("p2p GPU %d <-> GPU %d: %w", r.Src, r.Dst, err)
		}
		r.BidirSeconds = secs
		r.Wrong += atDst
		out[index[[2]int{r.Dst, r.Src}]].Wrong += atSrc
	}
	return out, nil
}

// enablePeers lets g's context reach every peer it can; it reports which.
func (n *Node) enablePeers(g *gpu) ([]bool, error) {
	can := make([]bool, len(n.gpus))
	for _, p := range n.gpus {
		if p == g {
			continue
		}
		var ok C.int
		if err := cuCheck("cuDeviceCanAccessPeer", C.gf_cuDeviceCanAccessPeer(&ok, g.dev, p.dev)); err != nil {
			return nil, err
		}
		if ok == 0 {
			continue
		}
		if r := C.gf_cuCtxEnablePeerAccess(p.ctx, 0); r != 0 && r != cudaErrorPeerAccessAlreadyEnabled {
			return nil, cuCheck(fmt.Sprintf("cuCtxEnablePeerAccess(GPU %d)", p.index), r)
		}
		can[p.index] = true
	}
	return can, nil
}

func (g *gpu) p2pBuffers(bytes int64) (p2pBuffers, error) {
	bufs, err := g.allocAll(bytes, bytes, 8)
	if err != nil {
		return p2pBuffers{}, err
	}
	b := p2pBuffers{src: bufs[0], dst: bufs[1], wrong: &counter{g: g, buf: bufs[2]}}
	return b, errors.Join(g.fillRandom(b.src, kernels.DTF32, bytes/4, p2pSeed(g.index)), b.wrong.reset(), g.sync())
}

func (c *counter) bufOrZero() buffer {
	if c == nil {
		return 0
	}
	return c.buf
}

func (n *Node) copyPeer(spec node.P2PSpec, bufs []p2pBuffers, src, dst int) error {
	s, d := n.gpus[src], n.gpus[dst]
	return cuCheck("cuMemcpyPeerAsync", C.gf_cuMemcpyPeerAsync(C.CUdeviceptr(bufs[dst].dst), d.ctx,
		C.CUdeviceptr(bufs[src].src), s.ctx, C.size_t(spec.Bytes), s.stream))
}

// oneWay times copies from src to dst on src's stream, then checks dst.
func (n *Node) oneWay(spec node.P2PSpec, bufs []p2pBuffers, src, dst int) (node.P2PResult, error) {
	r := node.P2PResult{Src: src, Dst: dst}
	s, d := n.gpus[src], n.gpus[dst]
	err := s.w.do(func() (err error) {
		r.OneWaySeconds, err = s.timed(spec.Warmup, spec.Iters, func() error { return n.copyPeer(spec, bufs, src, dst) })
		return err
	})
	if err != nil {
		return r, err
	}
	err = d.w.do(func() (err error) {
		r.Wrong, err = d.checkArrival(bufs[dst], spec.Bytes, src)
		return err
	})
	return r, err
}

// checkArrival counts the words of b.dst that differ from what src's
// buffer holds, then poisons b.dst for the next copy.
func (g *gpu) checkArrival(b p2pBuffers, bytes int64, src int) (int64, error) {
	if err := g.countRandomWrong(b.dst, kernels.DTF32, bytes/4, p2pSeed(src), b.wrong); err != nil {
		return 0, err
	}
	wrong, err := b.wrong.read()
	if err != nil {
		return 0, err
	}
	return wrong, errors.Join(b.wrong.reset(), g.poison(b.dst, bytes), g.sync())
}

// bothWays times a→b on a's stream and b→a on b's stream at once. Both
// streams start at a's start event, and a's end event waits for b's last
// copy, so a's two events bracket the whole exchange.
// It returns the seconds of one exchange and the wrong words that arrived
// at a and at b.
func (n *Node) bothWays(spec node.P2PSpec, bufs []p2pBuffers, a, b int) (secs float64, atA, atB int64, err error) {
	ga, gb := n.gpus[a], n.gpus[b]
	var ta, tb *timer
	err = errors.Join(
		ga.w.do(func() (err error) { ta, err = ga.newTimer(); return err }),
		gb.w.do(func() (err error) { tb, err = gb.newTimer(); return err }))
	defer func() {
		if ta != nil {
			err = errors.Join(err, ga.w.do(ta.destroy))
		}
		if tb != nil {
			err = errors.Join(err, gb.w.do(tb.destroy))
		}
	}()
	if err != nil {
		return 0, 0, 0, err
	}
	copies := func(src, dst, count int) error {
		for range count {
			if err := n.copyPeer(spec, bufs, src, dst); err != nil {
				return err
			}
		}
		return nil
	}
	if err := errors.Join(
		ga.w.do(func() error { return copies(a, b, spec.Warmup) }),
		gb.w.do(func() error { return copies(b, a, spec.Warmup) }),
		ga.w.do(func() error { return ga.sync() }),
		gb.w.do(func() error { return gb.sync() }),
		ga.w.do(func() error { return ta.begin(ga.stream) }),
		gb.w.do(func() error {
			return errors.Join(
				cuCheck("cuStreamWaitEvent", C.gf_cuStreamWaitEvent(gb.stream, ta.start, 0)),
				copies(b, a, spec.Iters),
				tb.finish(gb.stream))
		}),
		ga.w.do(func() error {
			return errors.Join(
				copies(a, b, spec.Iters),
				cuCheck("cuStreamWaitEvent", C.gf_cuStreamWaitEvent(ga.stream, tb.end, 0)),
				ta.finish(ga.stream))
		}),
	); err != nil {
		return 0, 0, 0, err
	}
	err = errors.Join(
		ga.w.do(func() (err error) { secs, err = ta.seconds(); return err }),
		gb.w.do(func() error { return gb.sync() }),
		ga.w.do(func() (err error) { atA, err = ga.checkArrival(bufs[a], spec.Bytes, b); return err }),
		gb.w.do(func() (err error) { atB, err = gb.checkArrival(bufs[b], spec.Bytes, a); return err }))
	return secs / float64(spec.Iters), atA, atB, err
}
