package sdk

import (
	"context"
	"errors"
	"testing"
)

func TestStopperCancelsTrackedContexts(t *testing.T) {
	t.Parallel()
	var s Stopper
	running, releaseRunning := s.Track(context.Background())
	finished, releaseFinished := s.Track(context.Background())
	releaseFinished()
	s.Stop()
	if !errors.Is(context.Cause(running), ErrStopped) {
		t.Errorf("running apply: cause %v, want ErrStopped", context.Cause(running))
	}
	if errors.Is(context.Cause(finished), ErrStopped) {
		t.Error("a released context was stopped")
	}
	later, releaseLater := s.Track(context.Background())
	defer releaseLater()
	if later.Err() != nil {
		t.Error("an apply started after Stop is already stopped")
	}
	releaseRunning()
}
