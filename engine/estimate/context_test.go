package estimate

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// TestRing: one layer's ring, step by step. Forward: step i computes
// while the chunk for step i+1 arrives. Backward: step i computes while
// the chunk for step i+1 arrives and step i-1's gradients go on; the last
// step's gradients go home after it, exposed.
func TestRing(t *testing.T) {
	t.Parallel()
	type times struct{ ForwardTotal, ForwardExposed, BackwardTotal, BackwardExposed float64 }
	tests := map[string]struct {
		r                          ring
		forward, backward, gradHop float64
		want                       times
	}{
		// Backward: hop at step 0, gradients at step 1, gradients home.
		"cp2, compute hides all but the last gradient hop": {ring{steps: 2, hop: 1}, 10, 20, 2, times{1, 0, 1 + 2 + 2, 2}},
		// Forward: three hops of 3 against steps of 1. Backward: step 0
		// carries a hop (3), steps 1 and 2 a hop and gradients (9), step 3
		// gradients (6), each against steps of 2; then gradients home.
		"cp4, hops longer than the steps": {ring{steps: 4, hop: 3}, 1, 2, 6, times{9, 3 * 2, 3 + 9 + 9 + 6 + 6, 1 + 7 + 7 + 4 + 6}},
		"cp4, hops just hidden":           {ring{steps: 4, hop: 1}, 1, 2, 1, times{3, 0, 1 + 2 + 2 + 1 + 1, 1}},
	}
	for name, tc := range tests {
		var got times
		got.ForwardTotal, got.ForwardExposed = tc.r.forward(tc.forward)
		got.BackwardTotal, got.BackwardExposed = tc.r.backward(tc.backward, tc.gradHop)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// TestContextParallelRing: the step's context-parallel time is the ring's
// transfers from first principles, K and V in bf16 and their gradients in
// fp32: cp-1 hops forward, cp-1 and cp backward, cp-1 more when fully
// recomputed. On NVLink an 8192-token sequence hides every hop behind
// the attention but the last gradient hop of each layer.
func TestContextParallelRing(t *testing.T) {
	t.Parallel()
	s := preset("llama3-8b")
	tests := map[string]struct {
		cp, tp    int
		recompute string
		forward   float64 // K and V hops per layer, forward and recomputed
	}{
		"cp2":                 {2, 1, layout.RecomputeNone, 1},
		"cp4":                 {4, 1, layout.RecomputeNone, 3},
		"cp2 tp2":             {2, 2, layout.RecomputeNone, 1},
		"cp4, full recompute": {4, 1, layout.RecomputeFull, 6},
	}
	for name, tc := range tests {
		l := layout.Layout{TP: tc.tp, PP: 1, DP: 8 / (tc.cp * tc.tp), CP: tc.cp, VP: 1, MicroBatch: 1, GlobalBatch: 64,
			Recompute: tc.recompute, SequenceParallel: tc.tp > 1, Precision: hardware.PrecisionBF16}
		j, err := newJob(Input{Model: s, Layout: l, Hardware: builtin("hgx-h200-8"), Framework: FrameworkGpuflow})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var p stepParts
		j.contextParallel(&p)
		k := j.links.forGroup(j.group(layout.KindCP))
		elements := 2 * float64(s.SeqLen/tc.cp) * float64(s.KVHeads*s.HeadDim()) / float64(tc.tp)
		hop := k.latencyS + elements*2/k.busBW
		grads := k.latencyS + elements*4/k.busBW
		layers := float64(s.Layers)
		want := []float64{layers * ((tc.forward+float64(tc.cp-1))*hop + float64(tc.cp)*grads), layers * grads}
		if got := []float64{p.cp, p.cpExposed}; !approx(got, want) {
			t.Errorf("%s: context-parallel time and exposed %v s per micro-batch, want %v", name, got, want)
		}
	}
}

func approx(got, want []float64) bool {
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*math.Abs(want[i]) {
			return false
		}
	}
	return len(got) == len(want)
}

// TestFP8TensorParallel: gpuflow's fp8 under TP gathers in fp8 with
// sequence parallelism (half the bytes of the gathers, the
// reduce-scatters in bf16) and all-reduces one maximum per split tensor;
// LoRA over its fp8 base gathers in bf16 and all-reduces the maxima of
// the forward's five column-parallel weights and two row-parallel inputs
// and weights, and of the backward's five column-parallel output
// gradients, with or without sequence parallelism; Megatron-LM's fp8 is
// charged as bf16.
func TestFP8TensorParallel(t *testing.T) {
	t.Parallel()
	s := preset("llama3-8b")
	tests := map[string]struct {
		framework, precision, recompute string
		sp                              bool
		pairs, maxima                   float64 // all-reduce equivalents and all-reduced maxima per layer
		fp8Gathers, lora                bool
	}{
		"bf16 with sequence parallelism": {FrameworkGpuflow, hardware.PrecisionBF16, layout.RecomputeNone, true, 4, 0, false, false},
		"fp8":                            {FrameworkGpuflow, hardware.PrecisionFP8, layout.RecomputeNone, false, 4, 14, false, false},
		"fp8 with sequence parallelism":  {FrameworkGpuflow, hardware.PrecisionFP8, layout.RecomputeNone, true, 4, 18, true, false},
		"fp8, sequence parallelism, full recompute":      {FrameworkGpuflow, hardware.PrecisionFP8, layout.RecomputeFull, true, 6, 29, true, false},
		"fp8 LoRA with sequence parallelism":             {FrameworkGpuflow, hardware.PrecisionFP8, layout.RecomputeNone, true, 4, 14, false, true},
		"fp8 LoRA, sequence parallelism, full recompute": {FrameworkGpuflow, hardware.PrecisionFP8, layout.RecomputeFull, true, 6, 23, false, true},
		"Megatron-LM's fp8":                              {FrameworkMegatron, hardware.PrecisionFP8, layout.RecomputeNone, true, 4, 0, false, false},
	}
	for name, tc := range tests {
		l := layout.Layout{TP: 2, PP: 1, DP: 4, CP: 1, VP: 1, MicroBatch: 1, GlobalBatch: 64, Recompute: tc.recompute,
			SequenceParallel: tc.sp, Precision: tc.precision}
		in := Input{Model: s, Layout: l, Hardware: builtin("hgx-h200-8"), Framework: tc.framework}
		if tc.lora {
			in.LoRA = &LoRA{Rank: 16, Targets: []string{"q", "v"}}
		}
		j, err := newJob(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var p stepParts
		j.tensorParallel(&p)
		k := j.links.forGroup(j.group(layout.KindTP))
		bytes := float64(s.SeqLen * s.Hidden * 2)
		pair := 2 * (k.latencyS + bytes/2/k.busBW)
		if tc.fp8Gathers {
			pair = 2*k.latencyS + bytes/4/k.busBW + bytes/2/k.busBW
		}
		want := float64(s.Layers) * (tc.pairs*pair + tc.maxima*2*(k.latencyS+2/k.busBW))
		if !approx([]float64{p.tp}, []float64{want}) {
			t.Errorf("%s: TP time %.6g s per micro-batch, want %.6g", name, p.tp, want)
		}
	}
}
