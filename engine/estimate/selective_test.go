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
// framework: torchtitan's operator-level policy (fsdp2) reruns every
// second product of a block (a Llama block's k, o and up; a GPT block's o
// and down, after its fused qkv) and no attention, Megatron's reruns the
// attention core alone.
func TestSelectiveRecomputesAlternate(t *testing.T) {
	t.Parallel()
	s8 := preset("llama3-8b")
	gelu := model.Shape{Layers: 4, Hidden: 1024, FFNHidden: 4096, Heads: 16, KVHeads: 16, Vocab: 1000, SeqLen: 2048,
		Activation: model.ActivationGELU}
	h, kv, f := 4096.0, 8.0*128, 14336.0
	tests := map[string]struct {
		shape                     model.Shape
		framework                 string
		recomputed, attentionRuns float64 // per token
	}{
		"fsdp2, Llama: k, o and up again": {s8, FrameworkFSDP2, 2 * 32 * (h*kv + h*h + h*f), 0},
		"fsdp2, GPT: o and down again":    {gelu, FrameworkFSDP2, 2 * 4 * (1024*1024 + 1024*4096), 0},
		"megatron: attention core again":  {s8, FrameworkMegatron, 0, 1},
	}
	for name, tc := range tests {
		in := Input{Model: tc.shape, Hardware: builtin("nebius-h100-8"), Framework: tc.framework,
			Layout: layout.Layout{TP: 1, PP: 1, DP: 8, CP: 1, VP: 1, FSDP: tc.framework == FrameworkFSDP2, MicroBatch: 1, GlobalBatch: 8,
				Recompute: layout.RecomputeSelective, Precision: hardware.PrecisionBF16}}
		j, err := newJob(in)
		if err != nil {
			t.Fatal(err)
		}
		attention := tc.attentionRuns * j.flops.attentionForward
		want := []float64{tc.recomputed + attention, attention}
		got := []float64{j.flops.recomputed, j.flops.recomputedAttention}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool {
			return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a))
		})); diff != "" {
			t.Errorf("%s: recomputed and recomputed attention per token (-want +got):\n%s", name, diff)
		}
	}
}

// TestAlternateActivations checks what a layer keeps under selective
// recomputation by alternate products, in bytes per sbh: the input (2),
// the attention output (2), the MLP's first product (2 ffn/h), and a Llama
// block's q (2), v (2 kv/heads) and down projection's output (2), or a GPT
// block's fused qkv (6 with as many kv heads as heads).
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
		"GELU, MHA":           {gelu, 1, false, 2 + 6 + 2 + 8},
		"GELU, TP 2":          {gelu, 2, false, 2 + (6+2+8)/2.0},
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

// TestAlternateMemory checks fsdp2's selective recomputation in the plan's
// memory: every layer keeps alternateActivations' exact outputs instead of
// its whole set scaled by the framework's coefficient, so against no
// recomputation it saves layers x (coefficient x whole set - kept), the
// logits' peak being the same in both.
func TestAlternateMemory(t *testing.T) {
	t.Parallel()
	s8 := preset("llama3-8b")
	plan := func(recompute string) *Estimate {
		e, err := Compute(Input{Model: s8, Hardware: builtin("nebius-h100-8"), Framework: FrameworkFSDP2,
			Layout: layout.Layout{TP: 1, PP: 1, DP: 8, CP: 1, VP: 1, FSDP: true, MicroBatch: 1, GlobalBatch: 8,
				Recompute: recompute, Precision: hardware.PrecisionBF16}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	seq := float64(s8.SeqLen)
	whole := layerActivations(s8, seq, 1, 1, false, layout.RecomputeNone, false)
	kept := alternateActivations(s8, seq, 1, 1, false)
	want := float64(s8.Layers) * (fsdp2Activation*whole - kept)
	got := float64(plan(layout.RecomputeNone).Memory.Activations - plan(layout.RecomputeSelective).Memory.Activations)
	if math.Abs(got/want-1) > 1e-6 {
		t.Errorf("selective saves %.3f GiB of activations, want %.3f", got/gib, want/gib)
	}
}
