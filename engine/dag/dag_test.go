package dag

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func build(edges ...[2]string) *Graph {
	g := New()
	for _, e := range edges {
		g.Add(e[0])
		if e[1] != "" {
			g.Add(e[1])
			g.Connect(e[0], e[1])
		}
	}
	return g
}

func TestCycleAndOrder(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		g         *Graph
		wantOrder []string
		wantCycle []string
	}{
		"chain":     {g: build([2]string{"c", "b"}, [2]string{"b", "a"}), wantOrder: []string{"a", "b", "c"}},
		"diamond":   {g: build([2]string{"d", "b"}, [2]string{"d", "c"}, [2]string{"b", "a"}, [2]string{"c", "a"}), wantOrder: []string{"a", "b", "c", "d"}},
		"isolated":  {g: build([2]string{"x", ""}, [2]string{"a", ""}), wantOrder: []string{"a", "x"}},
		"self loop": {g: build([2]string{"a", "a"}), wantCycle: []string{"a", "a"}},
		"three":     {g: build([2]string{"a", "b"}, [2]string{"b", "c"}, [2]string{"c", "a"}), wantCycle: []string{"a", "b", "c", "a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			order, ok := tc.g.TopoOrder()
			if diff := cmp.Diff(tc.wantOrder, order); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if ok != (tc.wantCycle == nil) {
				t.Errorf("ok = %v", ok)
			}
			if diff := cmp.Diff(tc.wantCycle, tc.g.Cycle()); diff != "" {
				t.Errorf("cycle (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWalkSkipsDownstreamOfFailure(t *testing.T) {
	t.Parallel()
	// a <- b <- c, a <- d; b fails.
	g := build([2]string{"b", "a"}, [2]string{"c", "b"}, [2]string{"d", "a"})
	var mu sync.Mutex
	var visited []string
	got := g.Walk(context.Background(), 2, func(_ context.Context, n string) Outcome {
		mu.Lock()
		visited = append(visited, n)
		mu.Unlock()
		if n == "b" {
			return Failed
		}
		return Succeeded
	})
	want := map[string]Outcome{"a": Succeeded, "b": Failed, "c": Skipped, "d": Succeeded}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	for _, n := range visited {
		if n == "c" {
			t.Error("c was visited although b failed")
		}
	}
}

func TestWalkRespectsParallelism(t *testing.T) {
	t.Parallel()
	g := New()
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		g.Add(n)
	}
	var running, peak atomic.Int32
	g.Walk(context.Background(), 2, func(context.Context, string) Outcome {
		now := running.Add(1)
		for {
			p := peak.Load()
			if now <= p || peak.CompareAndSwap(p, now) {
				break
			}
		}
		for i := 0; i < 1000; i++ {
			_ = i * i
		}
		running.Add(-1)
		return Succeeded
	})
	if peak.Load() > 2 {
		t.Errorf("peak concurrency %d, want <= 2", peak.Load())
	}
}

func TestWalkCancelledStartsNothing(t *testing.T) {
	t.Parallel()
	g := build([2]string{"b", "a"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := g.Walk(ctx, 1, func(context.Context, string) Outcome { t.Error("visited after cancel"); return Succeeded })
	if diff := cmp.Diff(map[string]Outcome{"a": Skipped, "b": Skipped}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
