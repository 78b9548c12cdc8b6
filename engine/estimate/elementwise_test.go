package estimate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// TestElementwiseBytes checks the element-wise kernels' bytes of GPT-3
// 175B on TP8 (one micro-batch of 2,048 tokens, 256 per GPU, 96 layers)
// against the per-element counts written out: without sequence
// parallelism every TP rank runs the norms and dropouts over the whole
// hidden width; with it, over its slice of the sequence.
func TestElementwiseBytes(t *testing.T) {
	t.Parallel()
	const h, f, tokensPerRank, layers = 12288.0, 4 * 12288.0, 2048.0 / 8, 96.0
	tests := map[string]struct {
		recompute string
		sp        bool
		perToken  float64 // bytes per token on one rank, per layer
	}{
		"full recomputation, no sequence parallelism": {layout.RecomputeFull, false, (56+22)*8*h + (8+4)*h + (10+4)*f},
		"no recomputation, no sequence parallelism":   {layout.RecomputeNone, false, 56*8*h + 8*h + 10*f},
		"selective with sequence parallelism":         {layout.RecomputeSelective, true, 56*h + 8*h + 10*f},
	}
	got, want := map[string]float64{}, map[string]float64{}
	for name, tc := range tests {
		in := optionsBase()
		in.Layout.PP, in.Layout.DP, in.Layout.GlobalBatch = 1, 8, 8
		in.Layout.Recompute, in.Layout.SequenceParallel = tc.recompute, tc.sp
		j, err := newJob(in)
		if err != nil {
			t.Fatal(err)
		}
		hbm := in.Hardware.GPU.HBMBytesPerS * hbmEfficiency
		got[name] = j.elementwiseTime()
		want[name] = tokensPerRank * layers * tc.perToken / hbm
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("element-wise time (-want +got):\n%s", diff)
	}
}

// TestArchitectureGEMMScale checks that an A100 reaches the published
// share of its peak relative to a Hopper GPU.
func TestArchitectureGEMMScale(t *testing.T) {
	t.Parallel()
	rateOf := func(profile string) float64 {
		in := optionsBase()
		in.Hardware = builtinNodes(profile, 16)
		j, err := newJob(in)
		if err != nil {
			t.Fatal(err)
		}
		return j.rate(hardware.PrecisionBF16) / (in.Hardware.GPU.TFLOPS[hardware.PrecisionBF16] * 1e12)
	}
	got := map[string]float64{
		"dgx-a100-80gb": rateOf("dgx-a100-80gb"),
		"dgx-h100":      rateOf("dgx-h100"),
	}
	want := map[string]float64{
		"dgx-a100-80gb": 746.0 / 989 * (267.9 / 312) / (792.1 / 989),
		"dgx-h100":      746.0 / 989,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("bf16 GEMM efficiency (-want +got):\n%s", diff)
	}
}
