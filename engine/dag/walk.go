package dag

import (
	"context"
	"sync"
)

// Outcome is how a node's visit ended.
type Outcome int

// Outcomes of a visit.
const (
	Succeeded Outcome = iota
	Failed
	// Skipped means the node was not visited because something it depends
	// on did not succeed (or the walk was cancelled first).
	Skipped
)

// VisitFunc runs one node. It is called at most once per node, never
// before every node it depends on has succeeded.
type VisitFunc func(ctx context.Context, node string) Outcome

// Walk visits every node of an acyclic graph, up to parallelism at once
// (at least one). A node whose dependency failed or was skipped is skipped,
// not visited. Once ctx is done no new node starts. It returns each node's
// outcome.
func (g *Graph) Walk(ctx context.Context, parallelism int, visit VisitFunc) map[string]Outcome {
	if parallelism < 1 {
		parallelism = 1
	}
	w := &walker{g: g, visit: visit, sem: make(chan struct{}, parallelism),
		outcome: map[string]Outcome{}, waiting: map[string]int{}}
	for _, n := range g.Nodes() {
		w.waiting[n] = len(g.deps[n])
	}
	w.mu.Lock()
	for _, n := range g.Nodes() {
		if w.waiting[n] == 0 {
			w.start(ctx, n)
		}
	}
	w.mu.Unlock()
	w.wg.Wait()
	return w.outcome
}

type walker struct {
	g     *Graph
	visit VisitFunc
	sem   chan struct{}
	wg    sync.WaitGroup

	mu      sync.Mutex
	outcome map[string]Outcome
	waiting map[string]int // unfinished dependencies per node
}

// start launches n's visit; w.mu is held.
func (w *walker) start(ctx context.Context, n string) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		out := Skipped
		select {
		case w.sem <- struct{}{}:
			if ctx.Err() == nil {
				out = w.visit(ctx, n)
			}
			<-w.sem
		case <-ctx.Done():
		}
		w.finish(ctx, n, out)
	}()
}

// finish records n's outcome and releases or skips its dependents.
func (w *walker) finish(ctx context.Context, n string, out Outcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outcome[n] = out
	for _, user := range w.g.Dependents(n) {
		if out != Succeeded {
			w.skip(user)
			continue
		}
		w.waiting[user]--
		if w.waiting[user] == 0 {
			if _, decided := w.outcome[user]; !decided {
				w.start(ctx, user)
			}
		}
	}
}

// skip marks n and everything downstream of it skipped; w.mu is held.
func (w *walker) skip(n string) {
	if _, decided := w.outcome[n]; decided {
		return
	}
	w.outcome[n] = Skipped
	for _, user := range w.g.Dependents(n) {
		w.skip(user)
	}
}
