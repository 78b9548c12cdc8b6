package estimate

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

// TestSelectiveRecomputesAlternate checks selective recomputation by
// framework: torchtitan's operator-level policy (fsdp2) reruns k, o and
// the MLP's second product of every layer and no attention, Megatron's
// reruns the attention core alone.
func TestSelectiveRecomputesAlternate(t *testing.T) {
	t.Parallel()
	s8 := preset("llama3-8b")
	h, kv, f := 4096.0, 8.0*128, 14336.0
	tests := map[string]struct {
		framework                 string
		recomputed, attentionRuns float64 // per token
	}{
		"fsdp2: k, o and up again":       {FrameworkFSDP2, 2 * 32 * (h*kv + h*h + h*f), 0},
		"megatron: attention core again": {FrameworkMegatron, 0, 1},
	}
	for name, tc := range tests {
		in := Input{Model: s8, Hardware: builtin("nebius-h100-8"), Framework: tc.framework,
			Layout: layout.Layout{TP: 1, PP: 1, DP: 8, CP: 1, VP: 1, FSDP: tc.framework == FrameworkFSDP2, MicroBatch: 1, GlobalBatch: 8,
				Recompute: layout.RecomputeSelective, Precision: hardware.PrecisionBF16}}
		j, err := newJob(in)
		if err != nil {
			t.Fatal(err)
		}
		want := tc.recomputed + tc.attentionRuns*j.flops.attentionForward
		got := []float64{j.flops.recomputed, j.flops.recomputedAttention}
		if diff := cmp.Diff([]float64{want, tc.attentionRuns * j.flops.attentionForward}, got,
			cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)) })); diff != "" {
			t.Errorf("%s: recomputed and recomputed attention per token (-want +got):\n%s", name, diff)
		}
	}
}

// TestAlternateActivations checks what a layer keeps under selective
// recomputation by alternate products, in bytes per sbh: the input (2),
// q (2), v (2 kv/heads), the attention output (2), the MLP's first product
// (2 ffn/h), and under SwiGLU the down projection's output (2).
func TestAlternateActivations(t *testing.T) {
	t.Parallel()
	gelu := model.Shape{Layers: 1, Hidden: 1024, FFNHidden: 4096, Heads: 16, KVHeads: 16, Vocab: 1000, SeqLen: 8,
		Activation: model.ActivationGELU}
	tests := map[string]struct {
		shape model.Shape
		tp    int
		sp    bool
		want  float64
	}{
		"Llama 3 8B":          {preset("llama3-8b"), 1, false, 2 + 2 + 0.5 + 2 + 7 + 2},
		"GELU, MHA":           {gelu, 1, false, 2 + 2 + 2 + 2 + 8},
		"GELU, TP 2":          {gelu, 2, false, 2 + (2+2+2+8)/2.0},
		"Llama 3 8B, TP 2+SP": {preset("llama3-8b"), 2, true, 1 + (2+0.5+2+7)/2.0 + 2},
	}
	for name, tc := range tests {
		sbh := 8.0 * 2 * float64(tc.shape.Hidden)
		got := alternateActivations(tc.shape, 8, 2, tc.tp, tc.sp) / sbh
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %.4f bytes per sbh, want %.4f", name, got, tc.want)
		}
	}
}
