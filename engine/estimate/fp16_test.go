package estimate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// TestTrainerPlansFP16AsBF16: gpuflow's trainer runs fp16 as it runs bf16
// (a 2-byte compute copy on one GPU, 2-byte gathers under FSDP2, fp32
// weights, gradients, reduction and optimizer states; the loss scaler
// holds a few scalars), so its plan's memory is bf16's and its compute
// differs only by the GEMM efficiency measured at each precision.
func TestTrainerPlansFP16AsBF16(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		hw     string
		layout layout.Layout
	}{
		"one GPU alone": {"h100-x1", layout.Layout{TP: 1, PP: 1, DP: 1, CP: 1, VP: 1, MicroBatch: 2, GlobalBatch: 8, Recompute: layout.RecomputeNone}},
		"FSDP2 over 8": {"hgx-h200-8", layout.Layout{TP: 1, PP: 1, DP: 8, CP: 1, VP: 1, FSDP: true, MicroBatch: 2, GlobalBatch: 64,
			Recompute: layout.RecomputeFull}},
		"TP2 x PP2 x DP2": {"hgx-h200-8", layout.Layout{TP: 2, PP: 2, DP: 2, CP: 1, VP: 1, MicroBatch: 1, GlobalBatch: 32,
			SequenceParallel: true, Recompute: layout.RecomputeSelective}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			plans := map[string]*Estimate{}
			for _, prec := range []string{hardware.PrecisionBF16, hardware.PrecisionFP16} {
				l := tc.layout
				l.Precision = prec
				e, err := Compute(Input{Model: preset("llama3.2-1b"), Layout: l, Hardware: builtin(tc.hw), Framework: FrameworkGpuflow})
				if err != nil {
					t.Fatal(err)
				}
				plans[prec] = e
			}
			bf16, fp16 := plans[hardware.PrecisionBF16], plans[hardware.PrecisionFP16]
			if diff := cmp.Diff(bf16.Memory, fp16.Memory); diff != "" {
				t.Errorf("fp16 memory differs from bf16's (-bf16 +fp16):\n%s", diff)
			}
			if fp16.ComputeS < bf16.ComputeS || fp16.ComputeS > bf16.ComputeS*746/721 {
				t.Errorf("compute %.4f s under fp16 against %.4f s under bf16: want at most the GEMM efficiencies' ratio 746/721 apart",
					fp16.ComputeS, bf16.ComputeS)
			}
		})
	}
}

// TestFP16RatesBF16 holds every built-in GPU from the A100 on to an fp16
// tensor-core rate equal to its bf16 one, as their datasheets give them.
func TestFP16RatesBF16(t *testing.T) {
	t.Parallel()
	for _, name := range hardware.DatasheetNames() {
		g, err := hardware.Datasheet(name)
		if err != nil {
			t.Fatal(err)
		}
		if g.TFLOPS[hardware.PrecisionFP16] != g.TFLOPS[hardware.PrecisionBF16] {
			t.Errorf("%s: %g TFLOP/s fp16 against %g bf16", name, g.TFLOPS[hardware.PrecisionFP16], g.TFLOPS[hardware.PrecisionBF16])
		}
	}
}
