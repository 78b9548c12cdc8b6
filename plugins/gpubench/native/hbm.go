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

// triadScalar is s in a = b + s*c.
const triadScalar = 3.0

// HBM implements node.Node.
func (n *Node) HBM(ctx context.Context, spec node.HBMSpec) ([]node.HBMResult, error) {
	if spec.Bytes <= 0 || spec.Bytes%64 != 0 {
		return nil, fmt.Errorf("hbm: buffer size %d bytes is not a positive multiple of 64", spec.Bytes)
	}
	out := make([]node.HBMResult, len(n.gpus))
	err := n.each(func(g *gpu) error {
		r, err := g.hbm(ctx, spec)
		out[g.index] = r
		return err
	})
	return out, err
}

// hbm copies x to y, then computes a = b + s*c over thirds of the same
// memory, checking both exactly.
func (g *gpu) hbm(ctx context.Context, spec node.HBMSpec) (res node.HBMResult, err error) {
	res.GPU = g.index
	bufs, err := g.allocAll(2*spec.Bytes, 8)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, g.sync(), g.free(bufs...)) }()
	region := bufs[0]
	wrong := &counter{g: g, buf: bufs[1]}
	x, y := region, region+buffer(spec.Bytes)
	words := spec.Bytes / 4
	const seedX, seedB, seedC = 11, 12, 13
	if err := errors.Join(
		g.fillRandom(x, kernels.DTF32, words, seedX),
		g.poison(y, spec.Bytes),
		wrong.reset(),
	); err != nil {
		return res, err
	}
	res.CopySeconds, err = g.timed(spec.Warmup, spec.Iters, func() error {
		return cuCheck("cuMemcpyDtoDAsync", C.gf_cuMemcpyDtoDAsync(C.CUdeviceptr(y), C.CUdeviceptr(x), C.size_t(spec.Bytes), g.stream))
	})
	if err != nil {
		return res, err
	}
	if err := g.countRandomWrong(y, kernels.DTF32, words, seedX, wrong); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	third := spec.TriadArrayBytes()
	a, b, c := region, region+buffer(third), region+buffer(2*third)
	n := third / 4
	if err := errors.Join(
		g.fillRandom(b, kernels.DTF32, n, seedB),
		g.fillRandom(c, kernels.DTF32, n, seedC),
		g.poison(a, third),
	); err != nil {
		return res, err
	}
	n4 := n / 4
	grid := C.uint((n4 + 1023) / 1024) // 256 threads, 4 vectors each
	res.TriadSeconds, err = g.timed(spec.Warmup, spec.Iters, func() error {
		return cuCheck("launch triad", C.gf_triad(g.fn[kernels.Triad], grid, g.stream,
			C.CUdeviceptr(a), C.CUdeviceptr(b), C.CUdeviceptr(c), triadScalar, C.ulonglong(n4)))
	})
	if err != nil {
		return res, err
	}
	if err := cuCheck("launch count_triad_wrong", C.gf_count_triad_wrong(g.fn[kernels.CountTriadWrong], g.grid(n),
		g.stream, C.CUdeviceptr(a), C.CUdeviceptr(b), C.CUdeviceptr(c), triadScalar, C.ulonglong(n), C.CUdeviceptr(wrong.buf))); err != nil {
		return res, err
	}
	res.Wrong, err = wrong.read()
	return res, err
}
