//go:build cgo && linux

package native

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/gpuflow/gpuflow/plugins/gpubench/kernels"
)

// Every method here runs on the GPU's own worker thread.

// buffer is device memory; zero means none.
type buffer C.CUdeviceptr

func (g *gpu) alloc(bytes int64) (buffer, error) {
	var p C.CUdeviceptr
	if err := cuCheck(fmt.Sprintf("cuMemAlloc(%d bytes)", bytes), C.gf_cuMemAlloc(&p, C.size_t(bytes))); err != nil {
		return 0, err
	}
	return buffer(p), nil
}

// free releases buffers, ignoring zero ones.
func (g *gpu) free(bufs ...buffer) error {
	var errs []error
	for _, b := range bufs {
		if b != 0 {
			errs = append(errs, cuCheck("cuMemFree", C.gf_cuMemFree(C.CUdeviceptr(b))))
		}
	}
	return errors.Join(errs...)
}

// allocAll allocates one buffer per size, freeing them all on failure.
func (g *gpu) allocAll(sizes ...int64) ([]buffer, error) {
	bufs := make([]buffer, 0, len(sizes))
	for _, size := range sizes {
		b, err := g.alloc(size)
		if err != nil {
			return nil, errors.Join(err, g.free(bufs...))
		}
		bufs = append(bufs, b)
	}
	return bufs, nil
}

func (g *gpu) sync() error {
	return cuCheck("cuStreamSynchronize", C.gf_cuStreamSynchronize(g.stream))
}

// grid sizes a grid-stride launch of 256-thread blocks over n elements:
// enough blocks to fill every multiprocessor several times, no more than
// the elements need.
func (g *gpu) grid(n int64) C.uint {
	blocks := (n + 255) / 256
	most := int64(g.sms) * 16
	if blocks > most {
		blocks = most
	}
	if blocks < 1 {
		blocks = 1
	}
	return C.uint(blocks)
}

// timer brackets work on the GPU's stream with a pair of events.
type timer struct {
	start, end C.CUevent
}

func (g *gpu) newTimer() (*timer, error) {
	t := &timer{}
	if err := cuCheck("cuEventCreate", C.gf_cuEventCreate(&t.start, 0)); err != nil {
		return nil, err
	}
	if err := cuCheck("cuEventCreate", C.gf_cuEventCreate(&t.end, 0)); err != nil {
		C.gf_cuEventDestroy(t.start)
		return nil, err
	}
	return t, nil
}

func (t *timer) destroy() error {
	return errors.Join(
		cuCheck("cuEventDestroy", C.gf_cuEventDestroy(t.start)),
		cuCheck("cuEventDestroy", C.gf_cuEventDestroy(t.end)))
}

func (t *timer) begin(s C.CUstream) error {
	return cuCheck("cuEventRecord", C.gf_cuEventRecord(t.start, s))
}

func (t *timer) finish(s C.CUstream) error {
	return cuCheck("cuEventRecord", C.gf_cuEventRecord(t.end, s))
}

// seconds waits for the end event and returns the time between the two.
func (t *timer) seconds() (float64, error) {
	if err := cuCheck("cuEventSynchronize", C.gf_cuEventSynchronize(t.end)); err != nil {
		return 0, err
	}
	var ms C.float
	if err := cuCheck("cuEventElapsedTime", C.gf_cuEventElapsedTime(&ms, t.start, t.end)); err != nil {
		return 0, err
	}
	return float64(ms) / 1e3, nil
}

// cudaErrorNotReady is what a query of unfinished work returns.
const cudaErrorNotReady = 600

// wait polls the end event until it completes or abort is closed, which
// leaves a thread blocked in no driver call and lets the caller abort NCCL.
func (t *timer) wait(abort <-chan struct{}) (bool, error) {
	for {
		r := C.gf_cuEventQuery(t.end)
		if r != cudaErrorNotReady {
			return true, cuCheck("cuEventQuery", r)
		}
		select {
		case <-abort:
			return false, nil
		default:
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// timed runs body iters times between the timer's events after warmup
// untimed runs, and returns the mean seconds of one run.
func (g *gpu) timed(warmup, iters int, body func() error) (float64, error) {
	return g.timedAfter(warmup, 0, iters, body)
}

// timedAfter is timed with a warm-up of at least warmup runs and at least
// warmupSeconds of GPU time.
func (g *gpu) timedAfter(warmup int, warmupSeconds float64, iters int, body func() error) (float64, error) {
	t, err := g.newTimer()
	if err != nil {
		return 0, err
	}
	defer t.destroy()
	if err := g.warm(warmup, warmupSeconds, body); err != nil {
		return 0, err
	}
	if err := t.begin(g.stream); err != nil {
		return 0, err
	}
	for range iters {
		if err := body(); err != nil {
			return 0, err
		}
	}
	if err := t.finish(g.stream); err != nil {
		return 0, err
	}
	s, err := t.seconds()
	return s / float64(iters), err
}

// warm runs body at least count times and for at least seconds, waiting
// for the GPU every few runs so that the clock measures its work, not the
// queueing of it.
func (g *gpu) warm(count int, seconds float64, body func() error) error {
	start := time.Now()
	for i := 0; i < count || time.Since(start).Seconds() < seconds; i++ {
		if err := body(); err != nil {
			return err
		}
		if seconds > 0 && i%4 == 3 {
			if err := g.sync(); err != nil {
				return err
			}
		}
	}
	return nil
}

// counter is a device-side count of wrong elements.
type counter struct {
	g   *gpu
	buf buffer
}

func (c *counter) reset() error {
	return cuCheck("cuMemsetD8Async", C.gf_cuMemsetD8Async(C.CUdeviceptr(c.buf), 0, 8, c.g.stream))
}

// read waits for the stream and returns the count.
func (c *counter) read() (int64, error) {
	if err := c.g.sync(); err != nil {
		return 0, err
	}
	var v C.ulonglong
	err := cuCheck("cuMemcpyDtoH", C.gf_cuMemcpyDtoH(unsafe.Pointer(&v), C.CUdeviceptr(c.buf), 8))
	return int64(v), err
}

func (g *gpu) fillRandom(b buffer, dt int, n int64, seed uint64) error {
	return cuCheck("launch fill_random", C.gf_fill_random(g.fn[kernels.FillRandom], g.grid(n), g.stream,
		C.CUdeviceptr(b), C.int(dt), C.ulonglong(n), C.ulonglong(seed)))
}

// countRandomWrong adds to c the elements of b that differ from what
// fillRandom(dt, seed) wrote.
func (g *gpu) countRandomWrong(b buffer, dt int, n int64, seed uint64, c *counter) error {
	return cuCheck("launch count_random_wrong", C.gf_count_random_wrong(g.fn[kernels.CountRandomWrong],
		g.grid(n), g.stream, C.CUdeviceptr(b), C.int(dt), C.ulonglong(n), C.ulonglong(seed), C.CUdeviceptr(c.buf)))
}

// poison fills bytes of b with 0xFF, a NaN in every float type, so that a
// check finds any element a run failed to write.
func (g *gpu) poison(b buffer, bytes int64) error {
	return cuCheck("cuMemsetD8Async", C.gf_cuMemsetD8Async(C.CUdeviceptr(b), 0xFF, C.size_t(bytes), g.stream))
}
