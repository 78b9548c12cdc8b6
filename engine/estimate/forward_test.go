package estimate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// A forward pass holds no gradients or optimizer states, takes about a
// third of a training step's compute, and runs through the same budget.
func TestForwardOnly(t *testing.T) {
	t.Parallel()
	in := sevenB()
	in.Layout.TP, in.Layout.DP, in.Layout.GlobalBatch = 1, 8, 64
	in.TrainTokens = 1e9
	train, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Forward = true
	fwd, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	if fwd.Memory.Gradients != 0 || fwd.Memory.Optimizer != 0 || fwd.TrainableParams != 0 || fwd.Goodput != nil {
		t.Errorf("forward estimate keeps training state: %+v, trainable %d, goodput %v", fwd.Memory, fwd.TrainableParams, fwd.Goodput)
	}
	if fwd.Memory.Total >= train.Memory.Total {
		t.Errorf("forward memory %d not below training's %d", fwd.Memory.Total, train.Memory.Total)
	}
	if r := fwd.StepTimeS / train.ComputeS; r < 0.25 || r > 0.45 {
		t.Errorf("forward step %.3f s is %.2f of the training step's compute %.3f s; want about a third", fwd.StepTimeS, r, train.ComputeS)
	}
	if fwd.Steps != train.Steps || fwd.DurationS <= 0 || fwd.DurationS >= train.DurationS {
		t.Errorf("forward: %d steps in %.0f s; training %d steps in %.0f s", fwd.Steps, fwd.DurationS, train.Steps, train.DurationS)
	}
}

// An evaluation of a 70B model on eight 80 GB GPUs: whole on every rank
// its bf16 weights alone overflow a GPU; sharded (fsdp = true, or zero =
// 3) each rank holds an eighth of them, plus the root module (embedding,
// final norm, output) and two layers gathered, and it fits.
func TestForwardShardedWeights(t *testing.T) {
	t.Parallel()
	s := preset("llama3-70b")
	c := Count(s)
	whole := c.Total(s.Layers) * forwardWeightBytes
	gathered := (c.Embedding+c.Output+c.Extra)*forwardWeightBytes + 2*c.PerLayer*forwardWeightBytes
	base := func(edit func(*layout.Layout)) Input {
		l := layout.Layout{TP: 1, PP: 1, DP: 8, CP: 1, VP: 1, MicroBatch: 1, GlobalBatch: 8, Recompute: layout.RecomputeNone,
			Precision: hardware.PrecisionBF16}
		edit(&l)
		return Input{Model: s, Hardware: builtin("dgx-h100"), Framework: FrameworkGpuflow, Layout: l, TrainTokens: 1e6, Forward: true}
	}
	replicated, err := Compute(base(func(*layout.Layout) {}))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*layout.Layout){
		"fsdp":   func(l *layout.Layout) { l.FSDP = true },
		"zero 3": func(l *layout.Layout) { l.ZeRO = 3 },
	} {
		t.Run(name, func(t *testing.T) {
			sharded, err := Compute(base(edit))
			if err != nil {
				t.Fatal(err)
			}
			want := []int64{int64(whole), int64(whole / 8), replicated.Memory.Other + int64(gathered)}
			got := []int64{replicated.Memory.Weights, sharded.Memory.Weights, sharded.Memory.Other}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("whole weights, sharded weights, sharded other (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"error memory-over-100"}, rules(replicated.Findings)); diff != "" {
				t.Errorf("replicated findings (-want +got):\n%s", diff)
			} else if !strings.Contains(replicated.Findings[0].Message, "fsdp = true") {
				t.Errorf("replicated finding %q does not name fsdp = true", replicated.Findings[0].Message)
			}
			if len(sharded.Findings) != 0 || sharded.Memory.Total >= replicated.Memory.Total {
				t.Errorf("sharded: %d bytes, findings %v; replicated %d bytes", sharded.Memory.Total, rules(sharded.Findings), replicated.Memory.Total)
			}
		})
	}
}

// A forward pass runs the same whatever the backward recomputes: a
// forward-only estimate's step and a training micro-batch's forward
// (passes) do not move with the layout's recompute, for gpuflow's trainer
// (whose recomputed forward stays outside the fitted remainder) and for
// Megatron-LM.
func TestForwardIgnoresRecompute(t *testing.T) {
	t.Parallel()
	for _, fw := range []string{FrameworkGpuflow, FrameworkMegatron} {
		in := sevenB()
		in.Framework = fw
		in.Layout.TP, in.Layout.DP, in.Layout.GlobalBatch = 1, 8, 64
		in.TrainTokens = 1e9
		forward := map[string]float64{}
		steps := map[string]float64{}
		for _, rc := range []string{layout.RecomputeNone, layout.RecomputeSelective, layout.RecomputeFull} {
			in.Layout.Recompute, in.Forward = rc, false
			j, err := newJob(in)
			if err != nil {
				t.Fatal(err)
			}
			fwd, _ := j.passes(j.microCompute())
			forward[rc] = fwd
			in.Forward = true
			e, err := Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			steps[rc] = e.StepTimeS
		}
		for _, rc := range []string{layout.RecomputeSelective, layout.RecomputeFull} {
			if !within(forward[rc], forward[layout.RecomputeNone], 1e-9) || !within(steps[rc], steps[layout.RecomputeNone], 1e-9) {
				t.Errorf("%s, recompute %s: forward %.6f s, forward-only step %.6f s; without recomputation %.6f and %.6f",
					fw, rc, forward[rc], steps[rc], forward[layout.RecomputeNone], steps[layout.RecomputeNone])
			}
		}
	}
}
