package engine

import (
	"sync"

	"github.com/gpuflow/gpuflow/engine/state"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// metricSummary folds a run's metric events into last, min, max and count
// per metric name, as state records them.
type metricSummary struct {
	mu sync.Mutex
	m  map[string]state.Metric
}

func (s *metricSummary) add(m *api.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]state.Metric{}
	}
	cur, seen := s.m[m.Name]
	if !seen {
		cur = state.Metric{Min: m.Value, Max: m.Value}
	}
	cur.Unit, cur.Last, cur.Count = m.Unit, m.Value, cur.Count+1
	cur.Min, cur.Max = min(cur.Min, m.Value), max(cur.Max, m.Value)
	s.m[m.Name] = cur
}

// snapshot returns a copy, nil when no metric was reported.
func (s *metricSummary) snapshot() map[string]state.Metric {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) == 0 {
		return nil
	}
	out := make(map[string]state.Metric, len(s.m))
	for k, v := range s.m {
		out[k] = v
	}
	return out
}
