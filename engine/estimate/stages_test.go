package estimate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// stagesBase is a 30-layer GPT on 24 DGX A100 GPUs (TP8 PP3), Megatron-LM,
// with layers adjustable.
func stagesBase(layers int) Input {
	s := gpt3()
	s.Layers = layers
	return Input{Model: s, Hardware: builtinNodes("dgx-a100-80gb", 3), Framework: FrameworkMegatron,
		Layout: layout.Layout{TP: 8, PP: 3, DP: 1, CP: 1, VP: 1, MicroBatch: 1, GlobalBatch: 12,
			Recompute: layout.RecomputeFull, Precision: hardware.PrecisionBF16}}
}

func mustCompute(t *testing.T, in Input) *Estimate {
	t.Helper()
	e, err := Compute(in)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestStageLayers checks what first_stage_layers and last_stage_layers
// change: counts equal to the even split change nothing; a stage with
// more layers than the average sets the steady state's pace, so the step
// lies between the even split's and that of a model whose every stage
// holds as many; the memory peak moves to the stage whose layers times
// micro-batches in flight is largest.
func TestStageLayers(t *testing.T) {
	t.Parallel()
	even := mustCompute(t, stagesBase(30))

	t.Run("equal counts are the even split", func(t *testing.T) {
		t.Parallel()
		in := stagesBase(30)
		in.Layout.FirstStageLayers, in.Layout.LastStageLayers = 10, 10
		if diff := cmp.Diff(even, mustCompute(t, in)); diff != "" {
			t.Errorf("first and last stage at the even share (-even +explicit):\n%s", diff)
		}
	})

	t.Run("the stage with the most layers sets the pace", func(t *testing.T) {
		t.Parallel()
		in := stagesBase(30)
		in.Layout.FirstStageLayers = 8 // 8, 11, 11
		got := mustCompute(t, in)
		all11 := mustCompute(t, stagesBase(33))
		if !(got.StepTimeS > even.StepTimeS && got.StepTimeS < all11.StepTimeS) {
			t.Errorf("step %.3f s with stages of 8, 11 and 11 layers; want between the even 10's %.3f and 11's %.3f",
				got.StepTimeS, even.StepTimeS, all11.StepTimeS)
		}
		// The 12 micro-batches' steady state runs at the 11-layer
		// stage's pace, the two bubble slots at the average's.
		want := (12*all11.StepTimeS/14 + 2*even.StepTimeS/14)
		t.Logf("step %.3f s: even %.3f, all 11 %.3f, expected %.3f", got.StepTimeS, even.StepTimeS, all11.StepTimeS, want)
		if !within(got.StepTimeS, want, 0.01) {
			t.Errorf("step %.3f s, want about %.3f (12 slots of 11 layers, 2 of 10)", got.StepTimeS, want)
		}
	})

	t.Run("the second stage holds the peak when the first is lighter", func(t *testing.T) {
		t.Parallel()
		// Without recomputation every layer keeps its whole set, so
		// activations scale with layers times micro-batches in flight.
		in := stagesBase(30)
		in.Layout.Recompute = layout.RecomputeNone
		evenNone := mustCompute(t, in)
		in.Layout.FirstStageLayers = 6 // 6, 12, 12: 18 layer-micro-batches on the first stage, 24 on the second
		got := mustCompute(t, in)
		// The even first stage: 10 layers x 3 in flight, and the
		// embedding's output (2% of it) that the second stage lacks.
		perLayerMicro := float64(evenNone.Memory.Activations) / 30
		t.Logf("activations %.3f GiB against 24 layer-micro-batches' %.3f", float64(got.Memory.Activations)/(1<<30), 24*perLayerMicro/(1<<30))
		if a := float64(got.Memory.Activations); !within(a, 24*perLayerMicro, 0.04) {
			t.Errorf("activations %.2f GiB, want about the second stage's 12 layers x 2 micro-batches, %.2f GiB",
				a/(1<<30), 24*perLayerMicro/(1<<30))
		}
		if got.Memory.Weights <= evenNone.Memory.Weights {
			t.Errorf("weights %d, want more than the even split's %d: the second stage holds 12 layers", got.Memory.Weights, evenNone.Memory.Weights)
		}
	})

	t.Run("a heavier last stage holds the weights and steps last", func(t *testing.T) {
		t.Parallel()
		in := stagesBase(30)
		in.Layout.LastStageLayers = 12 // 9, 9, 12
		got := mustCompute(t, in)
		if got.Memory.Weights <= even.Memory.Weights || got.OptimizerS <= even.OptimizerS {
			t.Errorf("weights %d and optimizer %.4f s; want both above the even split's %d and %.4f s (the last stage's 12 layers and output layer)",
				got.Memory.Weights, got.OptimizerS, even.Memory.Weights, even.OptimizerS)
		}
	})

	t.Run("interleaved, a heavy last stage holds the activations' peak", func(t *testing.T) {
		t.Parallel()
		in := stagesBase(32)
		in.Hardware = builtinNodes("dgx-a100-80gb", 4)
		in.Layout.PP, in.Layout.VP, in.Layout.GlobalBatch, in.Layout.Recompute = 4, 2, 16, layout.RecomputeNone
		evenNone := mustCompute(t, in)                                // 8 layers a stage; the first holds 4 + 3/2 micro-batches
		in.Layout.FirstStageLayers, in.Layout.LastStageLayers = 2, 18 // 2, 6, 6, 18
		got := mustCompute(t, in)
		perLayerMicro := float64(evenNone.Memory.Activations) / (8 * 5.5)
		// The last rank: 18 layers x (4 - 3/2) micro-batches, and its logits.
		if a := float64(got.Memory.Activations); a < 0.97*45*perLayerMicro {
			t.Errorf("activations %.2f GiB; want at least the last stage's 18 layers x 2.5 micro-batches, %.2f GiB",
				a/(1<<30), 45*perLayerMicro/(1<<30))
		}
	})

	t.Run("under LoRA the rank with the most adapters steps last", func(t *testing.T) {
		t.Parallel()
		in := stagesBase(30)
		in.LoRA = &LoRA{Rank: 16, Targets: []string{"all-linear"}}
		evenLoRA := mustCompute(t, in)
		in.Layout.FirstStageLayers = 8 // 8, 11, 11: the first holds the embedding, the others more adapters
		got := mustCompute(t, in)
		if !within(got.OptimizerS, evenLoRA.OptimizerS*11/10, 0.01) {
			t.Errorf("optimizer %.5f s; want the 11-layer rank's adapters, 11/10 of the even split's %.5f s", got.OptimizerS, evenLoRA.OptimizerS)
		}
	})
}
