//go:build cgo && linux

package native

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// worker runs functions on one OS thread, in order.
type worker struct {
	jobs chan func()
}

// startWorker locks a new goroutine to its thread, runs setup there and
// then serves jobs until stop.
func startWorker(setup func() error) (*worker, error) {
	w := &worker{jobs: make(chan func())}
	errc := make(chan error)
	go func() {
		// Never unlocked: the thread carries a CUDA context and exits with
		// the goroutine.
		runtime.LockOSThread()
		err := setup()
		errc <- err
		if err != nil {
			return
		}
		for job := range w.jobs {
			job()
		}
	}()
	return w, <-errc
}

// do runs f on the worker's thread and waits for it.
func (w *worker) do(f func() error) error {
	done := make(chan error, 1)
	w.jobs <- func() { done <- f() }
	return <-done
}

// start runs f on the worker's thread and returns at once; the result
// arrives on the channel.
func (w *worker) start(f func() error) <-chan error {
	done := make(chan error, 1)
	w.jobs <- func() { done <- f() }
	return done
}

func (w *worker) stop() { close(w.jobs) }

// each runs f for every GPU at once, each on its own worker, and joins the
// errors, each prefixed with its GPU.
func (n *Node) each(f func(g *gpu) error) error {
	errs := make([]error, len(n.gpus))
	var wg sync.WaitGroup
	for i, g := range n.gpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.w.do(func() error { return f(g) }); err != nil {
				errs[i] = fmt.Errorf("GPU %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
