package estimate

import (
	"testing"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// optionsBase is GPT-3 175B on 64 DGX A100 GPUs (TP8 PP8), Megatron-LM.
func optionsBase() Input {
	return Input{Model: gpt3(), Hardware: builtinNodes("dgx-a100-80gb", 16), Framework: FrameworkMegatron,
		Layout: layout.Layout{TP: 8, PP: 8, DP: 2, CP: 1, VP: 1, MicroBatch: 1, GlobalBatch: 64,
			Recompute: layout.RecomputeFull, Precision: hardware.PrecisionBF16}}
}

func builtinNodes(name string, nodes int) *hardware.Profile {
	hw := builtin(name)
	hw.Nodes = nodes
	return hw
}

// TestFrameworkOptions checks that each layout option moves the part of
// the estimate it models, and only in the direction it should.
func TestFrameworkOptions(t *testing.T) {
	t.Parallel()
	on, off := true, false
	tests := map[string]struct {
		change func(l *layout.Layout)
		check  func(base, got *Estimate) bool
		want   string
	}{
		"materialised attention costs time and, stored, memory": {
			change: func(l *layout.Layout) { l.Attention = layout.AttentionMaterialized; l.Recompute = layout.RecomputeNone },
			check: func(b, g *Estimate) bool {
				return g.ComputeS > b.ComputeS && g.Memory.Activations > b.Memory.Activations
			},
			want: "more compute time and more activation memory than flash",
		},
		"without scatter/gather every TP rank sends the whole activation": {
			change: func(l *layout.Layout) { l.ScatterGather = &off },
			check:  func(b, g *Estimate) bool { return g.CommS.PP > 2*b.CommS.PP },
			want:   "pipeline communication several times larger",
		},
		"gradients sent whole: the backward's sends as without scatter/gather": {
			change: func(l *layout.Layout) { l.ScatterGatherGrads = &off },
			check: func(b, g *Estimate) bool {
				// Forward sends split, backward ones whole: halfway
				// between scatter/gather on (the base) and off.
				in := optionsBase()
				in.Layout.ScatterGather = &off
				whole, err := Compute(in)
				return err == nil && g.CommS.PP > b.CommS.PP && within(g.CommS.PP, (b.CommS.PP+whole.CommS.PP)/2, 1e-9)
			},
			want: "pipeline communication halfway between scatter/gather on and off",
		},
		"bf16 gradient reduction halves the bytes and the main gradients": {
			change: func(l *layout.Layout) { l.GradReduceDType = hardware.PrecisionBF16 },
			check: func(b, g *Estimate) bool {
				return within(g.CommS.DP, b.CommS.DP/2, 0.05) && g.Memory.Gradients*2 == b.Memory.Gradients
			},
			want: "half the data-parallel communication and gradient memory",
		},
		"overlapped gradient reduction is hidden": {
			change: func(l *layout.Layout) { l.OverlapGradReduce = &on },
			check:  func(b, g *Estimate) bool { return b.ExposedCommS.DP > 0 && g.ExposedCommS.DP < b.ExposedCommS.DP },
			want:   "less exposed data-parallel communication",
		},
		"unfused gradient accumulation adds a memory pass per micro-batch": {
			change: func(l *layout.Layout) { l.GradAccumFusion = &off },
			check: func(b, g *Estimate) bool {
				// 10 bytes per parameter on this GPU (about a 64th of
				// the model: the bf16 gradient read, the fp32 main
				// gradient read and written) for each of the 32
				// micro-batches, at 88% of 2,039 GB/s.
				want := b.ComputeS + 32*float64(b.Params)/64*10/(2039e9*0.88)
				return g.ComputeS > b.ComputeS && within(g.ComputeS, want, 0.05)
			},
			want: "compute grown by one gradient pass per micro-batch",
		},
		"fp16 reduces in fp16 by Megatron's default": {
			change: func(l *layout.Layout) { l.Precision = hardware.PrecisionFP16 },
			check:  func(b, g *Estimate) bool { return g.Memory.Gradients*2 == b.Memory.Gradients },
			want:   "2-byte main gradients",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := optionsBase()
			tc.change(&in.Layout)
			// The base differs from the input only in the option.
			ref := optionsBase()
			ref.Layout.Recompute = in.Layout.Recompute
			base, err := Compute(ref)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Compute(in)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(base, got) {
				t.Errorf("want %s: base %+v, got %+v", tc.want, summary(base), summary(got))
			}
		})
	}
}

type estimateSummary struct {
	compute, pp, dp, dpExposed float64
	activations, gradients     int64
}

func summary(e *Estimate) estimateSummary {
	return estimateSummary{e.ComputeS, e.CommS.PP, e.CommS.DP, e.ExposedCommS.DP, e.Memory.Activations, e.Memory.Gradients}
}

// TestAchievedTFLOPS: hardware FLOPs count the recomputed forward, model
// FLOPs do not; without recomputation they agree, and model TFLOP/s over
// the peak is the MFU.
func TestAchievedTFLOPS(t *testing.T) {
	t.Parallel()
	for _, rc := range []string{layout.RecomputeNone, layout.RecomputeSelective, layout.RecomputeFull} {
		in := optionsBase()
		in.Layout.Recompute = rc
		in.Layout.SequenceParallel = true
		e, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		if !within(e.ModelTFLOPSPerGPU, e.MFU*312, 1e-9) {
			t.Errorf("%s: model %.1f TFLOP/s per GPU, MFU x peak %.1f", rc, e.ModelTFLOPSPerGPU, e.MFU*312)
		}
		ratio := e.HardwareTFLOPSPerGPU / e.ModelTFLOPSPerGPU
		switch {
		case rc == layout.RecomputeNone && ratio != 1,
			rc == layout.RecomputeSelective && (ratio <= 1 || ratio > 1.05),
			rc == layout.RecomputeFull && (ratio < 1.25 || ratio > 4.0/3):
			t.Errorf("%s: hardware / model FLOPs %.3f", rc, ratio)
		}
	}
}

// TestDeepSpeedPipelineSends: DeepSpeed's pipeline engine splits both
// the forward's sends and their gradients over the TP ranks by default
// (pipe_partitioned and grad_partitioned), as Megatron-LM does, and
// gathers each sent activation whole again before its backward: one more
// all-gather over NVLink per micro-batch, a fraction of the whole sends.
func TestDeepSpeedPipelineSends(t *testing.T) {
	t.Parallel()
	off := false
	plan := func(framework string, scatter *bool) *Estimate {
		t.Helper()
		in := optionsBase()
		in.Framework = framework
		in.Layout.ScatterGather = scatter
		e, err := Compute(in)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	deepspeed, whole, megatron := plan(FrameworkDeepSpeed, nil), plan(FrameworkDeepSpeed, &off), plan(FrameworkMegatron, nil)
	// 32 micro-batches, each gathering GPT-3's 2,048 x 12,288 bf16
	// activation from 8 slices at 0.76 of NVLink 3's 300 GB/s, plus the
	// ring's seven latencies.
	regather := 32 * 2048 * 12288 * 2 * 7.0 / 8 / (300e9 * 0.76)
	if !within(deepspeed.CommS.PP-megatron.CommS.PP, regather, 0.05) || 2*deepspeed.CommS.PP >= whole.CommS.PP {
		t.Errorf("deepspeed pipeline comm %.4f s, megatron's %.4f s + re-gather %.4f s, whole sends %.4f s",
			deepspeed.CommS.PP, megatron.CommS.PP, regather, whole.CommS.PP)
	}
}
