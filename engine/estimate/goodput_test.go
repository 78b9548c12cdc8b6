package estimate

import (
	"math"
	"testing"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// TestGoodput checks the goodput model on Llama 3 70B over 1,024 H100
// (128 nodes) against figures worked by hand from the published default
// rates: 1,024 x 12.63e-6 + 128 x 56.89e-6 = 0.02022 interruptions per
// hour, one per 49.5 h.
func TestGoodput(t *testing.T) {
	t.Parallel()
	hw := builtin("nebius-h100-8")
	hw.Nodes = 128
	base := Input{Model: preset("llama3-70b"), Hardware: hw, Framework: FrameworkMegatron,
		Layout: layout.Layout{TP: 8, PP: 4, DP: 32, CP: 1, VP: 1, ZeRO: 1, MicroBatch: 1, GlobalBatch: 1024,
			Recompute: layout.RecomputeSelective, SequenceParallel: true, Precision: hardware.PrecisionBF16},
		TrainTokens: 1e12}
	tests := map[string]struct {
		every       int64
		wantFinding bool
	}{
		"optimal interval":  {0, false},
		"every step":        {1, true},
		"near the optimum":  {-1, false},
		"every 5,000 steps": {5000, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := base
			in.CheckpointEvery = tc.every
			if tc.every < 0 {
				first, err := Compute(base)
				if err != nil {
					t.Fatal(err)
				}
				in.CheckpointEvery = int64(math.Round(first.Goodput.OptimalIntervalS / first.StepTimeS * 1.5))
			}
			e, err := Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			g := e.Goodput
			if g == nil {
				t.Fatal("no goodput for a budgeted stage")
			}
			if !within(g.MeanTimeBetweenInterruptionsS/3600, 49.45, 0.01) {
				t.Errorf("MTBI %.2f h, want 49.45 h", g.MeanTimeBetweenInterruptionsS/3600)
			}
			wantWrite := float64(g.CheckpointBytes) / (128 * hardware.DefaultStorageWriteBytesPerS)
			if !within(g.CheckpointWriteS, wantWrite, 1e-9) || !within(g.OptimalIntervalS, math.Sqrt(2*wantWrite*g.MeanTimeBetweenInterruptionsS), 1e-9) {
				t.Errorf("write %.1f s, Young-Daly %.1f s; want %.1f s and sqrt(2 x write x MTBI)", g.CheckpointWriteS, g.OptimalIntervalS, wantWrite)
			}
			if g.Goodput <= 0 || g.Goodput >= 1 || !within(g.WallTimeS, e.DurationS/g.Goodput, 1e-9) ||
				!within(g.ExpectedInterruptions, g.WallTimeS/g.MeanTimeBetweenInterruptionsS, 1e-9) {
				t.Errorf("goodput %.4f, wall %.0f s, interruptions %.2f for duration %.0f s", g.Goodput, g.WallTimeS, g.ExpectedInterruptions, e.DurationS)
			}
			if got := hasRule(e.Findings, "checkpoint-interval"); got != tc.wantFinding {
				t.Errorf("checkpoint-interval finding %v, want %v: %v", got, tc.wantFinding, e.Findings)
			}
		})
	}
}

// TestGoodputOptimumIsBest: no other interval gives a better goodput than
// Young-Daly's (to first order).
func TestGoodputOptimumIsBest(t *testing.T) {
	t.Parallel()
	g := &Goodput{CheckpointWriteS: 60, RestartS: 120, MeanTimeBetweenInterruptionsS: 40 * 3600}
	opt := math.Sqrt(2 * g.CheckpointWriteS * g.MeanTimeBetweenInterruptionsS)
	best := goodputAt(g, 1, opt)
	for _, f := range []float64{0.25, 0.5, 0.8, 1.25, 2, 4} {
		if got := goodputAt(g, 1, opt*f); got > best+1e-4 {
			t.Errorf("interval %.1fx the optimum: goodput %.5f above the optimum's %.5f", f, got, best)
		}
	}
}

func hasRule(fs []layout.Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule {
			return true
		}
	}
	return false
}
