package plandiff

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
)

func TestCompareEstimates(t *testing.T) {
	t.Parallel()
	base := trainingStage(t, base7b()).Estimate
	with := func(edit func(e *estimate.Estimate)) *estimate.Estimate {
		e := *base
		e.Findings = nil
		edit(&e)
		return &e
	}
	if got := compareEstimates(nil, nil); got != nil {
		t.Errorf("no estimates: got %+v", got)
	}
	if got := compareEstimates(base, with(func(e *estimate.Estimate) { e.Findings = base.Findings })); got != nil {
		t.Errorf("same estimate: got %+v", got)
	}

	got := compareEstimates(with(func(e *estimate.Estimate) { e.StepTimeS, e.BubbleFraction = 2, 0 }),
		with(func(e *estimate.Estimate) { e.StepTimeS, e.BubbleFraction = 3, 0.25 }))
	byName := map[string]Metric{}
	for _, m := range got.Metrics {
		byName[m.Name] = m
	}
	if len(got.Metrics) != len(metricOrder) {
		t.Errorf("got %d metrics, want all %d", len(got.Metrics), len(metricOrder))
	}
	if m := byName[MetricStepTime]; m.ChangePct == nil || *m.ChangePct != 50 {
		t.Errorf("step time 2 -> 3 s: change %v, want 50%%", m.ChangePct)
	}
	if m := byName[MetricBubble]; m.ChangePct != nil || *m.New != 0.25 {
		t.Errorf("bubble 0 -> 0.25: got change %v and new %v, want no percentage from zero", m.ChangePct, *m.New)
	}

	added := compareEstimates(nil, base)
	for _, m := range added.Metrics {
		if m.Old != nil || m.New == nil || m.ChangePct != nil {
			t.Errorf("added stage's %s: got %+v, want the new value only", m.Name, m)
		}
	}
}

func TestMemoryCrossing(t *testing.T) {
	t.Parallel()
	base := trainingStage(t, base7b()).Estimate
	capacity := base.MemoryCapacityBytes
	at := func(total int64, warned bool) *estimate.Estimate {
		e := *base
		e.Memory.Total, e.Findings = total, nil
		if warned {
			e.Findings = []layout.Finding{{Rule: memoryWarnRule, Severity: layout.SeverityWarning}}
		}
		return &e
	}
	tests := map[string]struct {
		old, new *estimate.Estimate
		want     *MemoryLimit
	}{
		"stays clear": {old: at(capacity/2, false), new: at(capacity/2+1, false)},
		"into the warning band": {old: at(capacity/2, false), new: at(capacity, true),
			want: &MemoryLimit{Old: MemoryFits, New: MemoryNear, Message: "memory per GPU now crosses the planner's warning mark (memory-over-90): 192.0 GiB of 192.0 GiB"}},
		"over the limit": {old: at(capacity, true), new: at(capacity+1<<30, true),
			want: &MemoryLimit{Old: MemoryNear, New: MemoryOver, Message: "memory per GPU now exceeds the GPU's memory: 193.0 GiB of 192.0 GiB"}},
		"back under": {old: at(capacity+1<<30, false), new: at(capacity/2, false),
			want: &MemoryLimit{Old: MemoryOver, New: MemoryFits, Message: "memory per GPU is now clear of the limit: 96.0 GiB of 192.0 GiB"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var got *MemoryLimit
			if e := compareEstimates(tc.old, tc.new); e != nil {
				got = e.MemoryLimit
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
