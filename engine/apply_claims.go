package engine

import (
	"context"
	"sync"
)

// claimLocks keeps stages that claim the same GPUs from running at once.
// The engine does not yet hand out individual GPUs, so a stage that claims
// any GPUs of a hardware block holds the whole block.
type claimLocks struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

func newClaimLocks() *claimLocks {
	return &claimLocks{locks: map[string]chan struct{}{}}
}

// claimKey names the GPUs a stage claims: its hardware block, or this
// machine for a stage that claims GPUs without one. "" means no GPUs.
func claimKey(sp *StagePlan) string {
	if sp.Claims.GPUsPerNode <= 0 {
		return ""
	}
	if sp.Hardware != nil {
		return "hardware." + sp.Hardware.Name
	}
	return "local"
}

// acquire waits for key's GPUs, or for ctx to end. The returned release is
// never nil; for key "" it does nothing.
func (c *claimLocks) acquire(ctx context.Context, key string) (release func(), err error) {
	if key == "" {
		return func() {}, nil
	}
	c.mu.Lock()
	lock := c.locks[key]
	if lock == nil {
		lock = make(chan struct{}, 1)
		c.locks[key] = lock
	}
	c.mu.Unlock()
	select {
	case lock <- struct{}{}:
		return func() { <-lock }, nil
	case <-ctx.Done():
		return func() {}, ctx.Err()
	}
}
