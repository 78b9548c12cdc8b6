package estimate

import (
	"math"
	"testing"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

// TestElementwiseShareOfProducts holds the element-wise kernels' time as a
// share of the products' time on three of the validation's layers, the
// figures docs/estimator.md quotes (go test -v -run
// TestElementwiseShareOfProducts ./engine/estimate/): the share falls as
// the layer widens, and rises where TP without sequence parallelism has
// every rank run the norms and dropouts over the whole width.
func TestElementwiseShareOfProducts(t *testing.T) {
	t.Parallel()
	gpt := func(layers, hidden, heads int) model.Shape {
		return model.Shape{Layers: layers, Hidden: hidden, FFNHidden: 4 * hidden, Heads: heads, KVHeads: heads, Vocab: 51200,
			SeqLen: 2048, Activation: model.ActivationGELU}
	}
	tests := map[string]struct {
		shape       model.Shape
		tp, micro   int
		share, near float64
	}{
		"1.7B, 2,304 wide, one GPU":       {gpt(24, 2304, 24), 1, 16, 0.08, 0.01},
		"18B, 6,144 wide, TP8 without SP": {gpt(40, 6144, 48), 8, 8, 0.17, 0.01},
		"1T, 25,600 wide, TP8 without SP": {gpt(128, 25600, 160), 8, 1, 0.04, 0.01},
	}
	for name, tc := range tests {
		in := Input{Model: tc.shape, Hardware: builtinNodes("dgx-a100-80gb", 1), Framework: FrameworkMegatron,
			Layout: layout.Layout{TP: tc.tp, PP: 1, DP: 8 / tc.tp, CP: 1, VP: 1, MicroBatch: tc.micro, GlobalBatch: tc.micro * 8 / tc.tp,
				Recompute: layout.RecomputeFull, Precision: hardware.PrecisionBF16}}
		j, err := newJob(in)
		if err != nil {
			t.Fatal(err)
		}
		products := j.tokensPerGPU() * (j.flops.executed - j.flops.attention) / j.rate(hardware.PrecisionBF16)
		got := j.elementwiseTime() / products
		t.Logf("%s: element-wise %.1f%% of the products' time", name, 100*got)
		if math.Abs(got-tc.share) > tc.near {
			t.Errorf("%s: element-wise %.1f%% of the products' time, want %.0f%% within %.0f points", name, 100*got, 100*tc.share, 100*tc.near)
		}
	}
}

// TestTrainerElementwiseShareOfProducts holds the compiled trainer's
// element-wise kernels' time as a share of its products' time on the lab
// shape and the Llama-3.2-1B shape on one H200, the figures
// docs/estimator.md quotes (go test -v -run
// TestTrainerElementwiseShareOfProducts ./engine/estimate/).
func TestTrainerElementwiseShareOfProducts(t *testing.T) {
	t.Parallel()
	b1 := preset("llama3.2-1b")
	b1.SeqLen = 4096
	tests := map[string]struct {
		shape       model.Shape
		micro       int
		share, near float64
	}{
		"lab shape, hidden 768, micro-batch 64": {labShape(), 64, 0.33, 0.01},
		"1B shape, hidden 2,048, micro-batch 4": {b1, 4, 0.12, 0.01},
	}
	for name, tc := range tests {
		in := Input{Model: tc.shape, Hardware: builtin("h200-x1"), Framework: FrameworkGpuflow,
			Layout: trainerLayout(1, tc.micro, tc.micro, false, layout.RecomputeNone)}
		j, err := newJob(in)
		if err != nil {
			t.Fatal(err)
		}
		products := j.tokensPerGPU() * (j.flops.executed - j.flops.attention) / j.rate(hardware.PrecisionBF16)
		got := j.trainerElementwiseTime() / products
		t.Logf("%s: element-wise %.1f%% of the products' time (%.1f ms of %.1f ms)", name, 100*got, 1e3*j.trainerElementwiseTime(), 1e3*products)
		if math.Abs(got-tc.share) > tc.near {
			t.Errorf("%s: element-wise %.1f%% of the products' time, want %.0f%% within %.0f points", name, 100*got, 100*tc.share, 100*tc.near)
		}
	}
}

// TestEagerElementwiseShareOfProducts holds the unfused element-wise
// kernels' time of an eager PyTorch block as a share of its products'
// time, the figures docs/estimator.md quotes (go test -v -run
// TestEagerElementwiseShareOfProducts ./engine/estimate/): on the
// Llama-3.2-1B shape the reference measurements ran, against a GELU model
// 7,168 wide (LayerNorm, no rotary positions), where no flat share of the
// products can serve both.
func TestEagerElementwiseShareOfProducts(t *testing.T) {
	t.Parallel()
	b1 := preset("llama3.2-1b")
	b1.SeqLen = 4096
	wide := model.Shape{Layers: 48, Hidden: 7168, FFNHidden: 4 * 7168, Heads: 64, KVHeads: 64, Vocab: 50368,
		SeqLen: 2048, TiedEmbeddings: true, Activation: model.ActivationGELU}
	tests := map[string]struct {
		shape       model.Shape
		micro       int
		share, near float64
	}{
		"1B shape, hidden 2,048, micro-batch 1": {b1, 1, 1.29, 0.01},
		"GELU, hidden 7,168, micro-batch 8":     {wide, 8, 0.19, 0.01},
	}
	for name, tc := range tests {
		in := Input{Model: tc.shape, Hardware: builtin("h100-x1"), Framework: FrameworkEager,
			Layout: layout.Layout{TP: 1, PP: 1, DP: 1, CP: 1, VP: 1, MicroBatch: tc.micro, GlobalBatch: tc.micro,
				Recompute: layout.RecomputeNone, Precision: hardware.PrecisionBF16}}
		j, err := newJob(in)
		if err != nil {
			t.Fatal(err)
		}
		products := j.tokensPerGPU() * (j.flops.executed - j.flops.attention) / j.rate(hardware.PrecisionBF16)
		got := j.eagerElementwiseTime() / products
		t.Logf("%s: element-wise %.1f%% of the products' time (%.1f ms of %.1f ms)", name, 100*got, 1e3*j.eagerElementwiseTime(), 1e3*products)
		if math.Abs(got-tc.share) > tc.near {
			t.Errorf("%s: element-wise %.1f%% of the products' time, want %.0f%% within %.0f points", name, 100*got, 100*tc.share, 100*tc.near)
		}
	}
}
