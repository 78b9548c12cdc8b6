package estimate

import (
	"math"
	"testing"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// TestLossParallelLogits: under TP gpuflow's trainer holds each rank's
// share of the logits; gathered whole (as it ran before loss parallelism)
// every rank held all of them in fp32 plus its bf16 shard.
func TestLossParallelLogits(t *testing.T) {
	t.Parallel()
	s := preset("llama3.2-1b")
	for _, tp := range []int{2, 4} {
		l := layout.Layout{TP: tp, PP: 1, DP: 1, CP: 1, VP: 1, MicroBatch: 2, GlobalBatch: 2, Recompute: layout.RecomputeNone,
			Precision: hardware.PrecisionBF16}
		in := Input{Model: s, Layout: l, Hardware: builtin("h200-x4"), Framework: FrameworkGpuflow}
		split, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		in.GatheredLogits = true
		whole, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		fw, _ := LookupFramework(FrameworkGpuflow)
		n := float64(s.SeqLen) * 2 * float64(s.Vocab)
		want := n*fw.LogitBytes - n*fw.LogitBytes/float64(tp) + n*2/float64(tp)
		got := float64(whole.Memory.Activations - split.Memory.Activations)
		if math.Abs(got-want) > 0.01*want {
			t.Errorf("tp = %d: gathering the logits adds %.3g bytes, want %.3g", tp, got, want)
		}
	}
}

// TestAdaptersOnRank: under TP an adapter's factor on the hidden side
// stays whole on every rank, the other is split with its base layer.
func TestAdaptersOnRank(t *testing.T) {
	t.Parallel()
	s := preset("llama3.2-1b")
	lora := LoRA{Rank: 16, Targets: []string{"q_proj", "down_proj"}}
	per, err := adapterParamsPerLayer(s, lora)
	if err != nil {
		t.Fatal(err)
	}
	q := float64(s.Heads * s.HeadDim())
	h, ffn, r := float64(s.Hidden), float64(s.FFNHidden), float64(lora.Rank)
	tests := map[string]struct {
		tp   int
		want float64
	}{
		"one rank holds all":               {1, per},
		"q's A and down's B stay whole":    {2, r*h + r*q/2 + r*ffn/2 + r*h},
		"the split side shrinks with tp=4": {4, r*h + r*q/4 + r*ffn/4 + r*h},
	}
	for name, tc := range tests {
		if got := adaptersOnRank(per, s, lora, 2, tc.tp); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: %g adapter parameters on a rank, want %g", name, got, tc.want)
		}
	}
}

// TestTiedLastStage: the last pipeline stage of a tied model holds its
// own copy of the embedding for the output projection.
func TestTiedLastStage(t *testing.T) {
	t.Parallel()
	s := preset("llama3.2-1b")
	l := layout.Layout{TP: 2, PP: 2, DP: 1, CP: 1, VP: 1, MicroBatch: 1, GlobalBatch: 4, Recompute: layout.RecomputeNone,
		Precision: hardware.PrecisionBF16}
	j, err := newJob(Input{Model: s, Layout: l, Hardware: builtin("h200-x4"), Framework: FrameworkGpuflow})
	if err != nil {
		t.Fatal(err)
	}
	c := Count(s)
	want := (c.PerLayer*float64(s.Layers)/2 + c.Embedding + c.Extra) / 2
	if got := j.lastStageParams(j.stageLayers[1]); math.Abs(got-want) > 1 {
		t.Errorf("last stage holds %g parameters per rank, want %g (its layers, the embedding's copy, the norm)", got, want)
	}
}
