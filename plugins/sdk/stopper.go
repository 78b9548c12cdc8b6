package sdk

import (
	"context"
	"errors"
	"sync"
)

// ErrStopped is the cause of a context cancelled by Stopper.Stop.
var ErrStopped = errors.New("stopped at the host's request")

// Stopper implements the bookkeeping behind Provider.Stop: every ApplyStage
// derives its context with Track, and Stop cancels all tracked contexts
// with the cause ErrStopped, so an apply can tell a stop
// (context.Cause(ctx) == ErrStopped) from its own timeout or the host going
// away. The zero value is ready to use.
type Stopper struct {
	mu      sync.Mutex
	next    int
	cancels map[int]context.CancelCauseFunc
}

// Track returns a context that Stop cancels. Call release when the apply
// ends.
func (s *Stopper) Track(ctx context.Context) (_ context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancels == nil {
		s.cancels = make(map[int]context.CancelCauseFunc)
	}
	id := s.next
	s.next++
	s.cancels[id] = cancel
	return ctx, func() {
		s.mu.Lock()
		delete(s.cancels, id)
		s.mu.Unlock()
		cancel(nil)
	}
}

// Stop cancels every tracked context. Applies started later are unaffected.
func (s *Stopper) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cancel := range s.cancels {
		cancel(ErrStopped)
	}
}
