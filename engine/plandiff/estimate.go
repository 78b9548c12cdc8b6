package plandiff

import (
	"fmt"

	"github.com/gpuflow/gpuflow/engine/estimate"
)

// Metric names, each with its unit in the name.
const (
	MetricMemoryPerGPU   = "memory_per_gpu_bytes"
	MetricMemoryCapacity = "memory_capacity_bytes"
	MetricStepTime       = "step_time_s"
	MetricTokensPerS     = "tokens_per_s"
	MetricMFU            = "mfu"
	MetricDuration       = "duration_s"
	MetricCost           = "cost_usd"
	MetricEnergy         = "energy_kwh"
	MetricBubble         = "bubble_fraction"
)

// Memory bands a stage's predicted memory per GPU falls in.
const (
	MemoryFits = "fits"
	// MemoryNear: the estimator warns (rule memory-over-90) that little
	// room is left.
	MemoryNear = "near_limit"
	// MemoryOver: more than the GPU has.
	MemoryOver = "over_limit"
)

// memoryWarnRule is the estimator's finding for memory close to capacity.
const memoryWarnRule = "memory-over-90"

// Estimate is how a training stage's prediction moves.
type Estimate struct {
	// Metrics always lists the same figures in the same order.
	Metrics []Metric `json:"metrics"`
	// MemoryLimit is present when memory per GPU moves into or out of
	// a band: fits, near the limit, over it.
	MemoryLimit *MemoryLimit `json:"memory_limit,omitempty"`
}

// Metric is one predicted figure. Old or New is absent for a stage
// without an estimate on that side; ChangePct is absent unless both are
// there and Old is not zero.
type Metric struct {
	Name      string   `json:"name"`
	Old       *float64 `json:"old,omitempty"`
	New       *float64 `json:"new,omitempty"`
	ChangePct *float64 `json:"change_pct,omitempty"`
}

// MemoryLimit is a crossing of a memory band.
type MemoryLimit struct {
	Old     string `json:"old"`
	New     string `json:"new"`
	Message string `json:"message"`
}

// compareEstimates diffs two estimates, either of which may be nil; nil
// when both are nil or every figure is the same.
func compareEstimates(o, n *estimate.Estimate) *Estimate {
	if o == nil && n == nil {
		return nil
	}
	oldF, newF := figures(o), figures(n)
	e := &Estimate{}
	same := o != nil && n != nil
	for i, name := range metricOrder {
		m := Metric{Name: name}
		if o != nil {
			m.Old = &oldF[i]
		}
		if n != nil {
			m.New = &newF[i]
		}
		if o != nil && n != nil && oldF[i] != 0 {
			pct := 100 * (newF[i] - oldF[i]) / oldF[i]
			m.ChangePct = &pct
		}
		same = same && oldF[i] == newF[i]
		e.Metrics = append(e.Metrics, m)
	}
	if same {
		return nil
	}
	e.MemoryLimit = memoryCrossing(o, n)
	return e
}

var metricOrder = []string{MetricMemoryPerGPU, MetricMemoryCapacity, MetricStepTime, MetricTokensPerS, MetricMFU,
	MetricDuration, MetricCost, MetricEnergy, MetricBubble}

// figures returns an estimate's values in metricOrder; zeros for nil.
func figures(e *estimate.Estimate) []float64 {
	if e == nil {
		return make([]float64, len(metricOrder))
	}
	return []float64{float64(e.Memory.Total), float64(e.MemoryCapacityBytes), e.StepTimeS, e.TokensPerS, e.MFU,
		e.DurationS, e.CostUSD, e.EnergyKWh, e.BubbleFraction}
}

// memoryCrossing reports a move between memory bands; nil without one.
func memoryCrossing(o, n *estimate.Estimate) *MemoryLimit {
	if o == nil || n == nil {
		return nil
	}
	a, b := memoryBand(o), memoryBand(n)
	if a == b {
		return nil
	}
	used := fmt.Sprintf("%.1f GiB of %.1f GiB", gib(n.Memory.Total), gib(n.MemoryCapacityBytes))
	var msg string
	switch b {
	case MemoryOver:
		msg = "memory per GPU now exceeds the GPU's memory: " + used
	case MemoryNear:
		msg = "memory per GPU now crosses the planner's warning mark (" + memoryWarnRule + "): " + used
	default:
		msg = "memory per GPU is now clear of the limit: " + used
	}
	return &MemoryLimit{Old: a, New: b, Message: msg}
}

// memoryBand places an estimate: over capacity, near it where the
// estimator warned, or fitting.
func memoryBand(e *estimate.Estimate) string {
	if e.MemoryCapacityBytes > 0 && e.Memory.Total > e.MemoryCapacityBytes {
		return MemoryOver
	}
	for _, f := range e.Findings {
		if f.Rule == memoryWarnRule {
			return MemoryNear
		}
	}
	return MemoryFits
}

func gib(b int64) float64 { return float64(b) / (1 << 30) }
