package estimate

import (
	"math"
	"testing"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

// TestLookupsLeaveExecutedWork: gpuflow's trainer on one stage without
// tensor parallelism executes no products for an untied input embedding
// or learned positions; everywhere else, and in the model FLOPs MFU is
// quoted in, they stay.
func TestLookupsLeaveExecutedWork(t *testing.T) {
	t.Parallel()
	llama := preset("llama3.2-1b")
	untied := llama
	untied.TiedEmbeddings = false
	gpt := untied
	gpt.Activation = model.ActivationGELU
	h, v := float64(llama.Hidden), float64(llama.Vocab)
	cases := map[string]struct {
		shape     model.Shape
		framework string
		tp, pp    int
		want      float64 // executed FLOPs per token less the model's
	}{
		"gpuflow, untied, one GPU":       {untied, FrameworkGpuflow, 1, 1, -6 * v * h},
		"gpuflow, GELU positions too":    {gpt, FrameworkGpuflow, 1, 1, -6 * (v*h + float64(gpt.SeqLen)*h)},
		"gpuflow, tied":                  {llama, FrameworkGpuflow, 1, 1, 0},
		"gpuflow, untied under TP":       {untied, FrameworkGpuflow, 2, 1, 0},
		"gpuflow, untied under PP":       {untied, FrameworkGpuflow, 1, 2, 0},
		"megatron, untied, one GPU":      {untied, FrameworkMegatron, 1, 1, 0},
		"gpuflow-eager, untied, one GPU": {untied, FrameworkGpuflowEager, 1, 1, -6 * v * h},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			gpus := c.tp * c.pp
			hw := builtin("h200-x1")
			if gpus > 1 {
				hw = builtin("nebius-h100-8")
			}
			in := Input{Model: c.shape, Hardware: hw, Framework: c.framework, Layout: layout.Layout{TP: c.tp, PP: c.pp, DP: 1, CP: 1, VP: 1,
				MicroBatch: 1, GlobalBatch: 4, Recompute: layout.RecomputeNone, Precision: hardware.PrecisionBF16}}
			j, err := newJob(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := j.flops.executed - j.flops.model; math.Abs(got-c.want) > 1 {
				t.Errorf("executed - model = %.4g FLOPs per token, want %.4g", got, c.want)
			}
		})
	}
}
