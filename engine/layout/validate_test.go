package layout

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/hardware"
)

func llama7b() model.Shape {
	s, err := model.Preset("llama2-7b")
	if err != nil {
		panic(err)
	}
	return s
}

// sound is TP2 DP4 on one 8-GPU node, the reference 7B recipe.
func sound() Layout {
	return Layout{TP: 2, PP: 1, DP: 4, CP: 1, VP: 1, MicroBatch: 4, GlobalBatch: 256,
		Recompute: RecomputeSelective, SequenceParallel: true, Precision: "fp8"}
}

// ruleOf drops the message so tables stay short; messages are checked
// separately for being full sentences.
type ruleOf struct{ Rule, Severity, Field string }

// stages edits sound() into pp x dp (tp 2, so pp x dp = 4 on one HGX
// node), interleaved over vp, with the first and last stage's layer
// counts (0 leaves a count unset).
func stages(pp, dp, vp, first, last int) func(*Layout, *model.Shape) {
	return func(l *Layout, _ *model.Shape) {
		l.PP, l.DP, l.VP, l.FirstStageLayers, l.LastStageLayers = pp, dp, vp, first, last
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		edit func(*Layout, *model.Shape)
		hw   *hardware.Profile
		gpus int
		want []ruleOf
	}{
		"sound layout":                  {edit: func(*Layout, *model.Shape) {}, hw: hgx(1)},
		"gpus defaults to the hardware": {edit: func(l *Layout, _ *model.Shape) { l.DP = 8 }, hw: hgx(2)},
		"unset vp reads as 1":           {edit: func(l *Layout, _ *model.Shape) { l.VP = 0 }, hw: hgx(1)},
		"world size mismatch": {edit: func(l *Layout, _ *model.Shape) { l.DP = 2; l.GlobalBatch = 8 }, hw: hgx(1),
			want: []ruleOf{{"world-size", "error", "dp"}}},
		"stage asks for more GPUs than exist": {edit: func(l *Layout, _ *model.Shape) { l.DP = 8 }, hw: hgx(1), gpus: 16,
			want: []ruleOf{{"world-size", "error", "dp"}}},
		"tp across nodes": {edit: func(l *Layout, _ *model.Shape) { l.TP = 16; l.DP = 1; l.GlobalBatch = 4 }, hw: hgx(2),
			want: []ruleOf{{"tp-in-domain", "error", "tp"}}},
		"tp over pcie": {edit: func(l *Layout, _ *model.Shape) { l.DP = 2; l.GlobalBatch = 8; l.Precision = "bf16" }, hw: pcieBox(),
			want: []ruleOf{{"tp-in-domain", "warning", "tp"}}},
		"tp across nvl72 nodes stays in the domain": {edit: func(l *Layout, _ *model.Shape) { l.TP = 8; l.DP = 9; l.MicroBatch = 1; l.GlobalBatch = 72 }, hw: nvl72(18)},
		"heads": {edit: func(l *Layout, s *model.Shape) { s.Heads = 33 }, hw: hgx(1),
			want: []ruleOf{{"heads-divisible", "error", "tp"}}},
		"kv heads": {edit: func(l *Layout, s *model.Shape) { s.KVHeads = 1 }, hw: hgx(1),
			want: []ruleOf{{"kv-heads-divisible", "error", "tp"}}},
		"layers over pp": {edit: func(l *Layout, s *model.Shape) {
			l.PP = 3
			l.DP = 1
			l.TP = 1
			l.GlobalBatch = 8
			l.SequenceParallel = false
		}, gpus: 3, hw: hgx(1),
			want: []ruleOf{{"layers-divisible", "error", "pp"}}},
		"layers over pp*vp": {edit: func(l *Layout, s *model.Shape) { l.PP = 2; l.DP = 2; l.VP = 3 }, hw: hgx(1),
			want: []ruleOf{{"layers-divisible", "error", "vp"}}},
		"first and last stage layers":           {edit: stages(4, 1, 1, 7, 7), hw: hgx(1)},
		"first stage layers alone":              {edit: stages(4, 1, 1, 5, 0), hw: hgx(1)},
		"uneven rest":                           {edit: stages(4, 1, 1, 7, 6), hw: hgx(1), want: []ruleOf{{"layers-divisible", "error", "first_stage_layers"}}},
		"last stage layers alone, uneven rest":  {edit: stages(4, 1, 1, 0, 4), hw: hgx(1), want: []ruleOf{{"layers-divisible", "error", "last_stage_layers"}}},
		"two stages that miss the layer count":  {edit: stages(2, 2, 1, 10, 10), hw: hgx(1), want: []ruleOf{{"layers-divisible", "error", "first_stage_layers"}}},
		"stage layers over vp":                  {edit: stages(4, 1, 2, 7, 7), hw: hgx(1), want: []ruleOf{{"layers-divisible", "error", "first_stage_layers"}}},
		"stage layers that split over vp":       {edit: stages(4, 1, 2, 6, 6), hw: hgx(1)},
		"stage layers without pp":               {edit: stages(1, 4, 1, 0, 3), hw: hgx(1), want: []ruleOf{{"stage-layers-require-pp", "error", "last_stage_layers"}}},
		"stage layers above the model's":        {edit: stages(2, 2, 1, 40, 0), hw: hgx(1), want: []ruleOf{{"layers-divisible", "error", "first_stage_layers"}}},
		"stages between that vp does not split": {edit: stages(4, 1, 2, 6, 8), hw: hgx(1), want: []ruleOf{{"layers-divisible", "error", "vp"}}},
		"last stage layers over vp":             {edit: stages(4, 1, 2, 0, 5), hw: hgx(1), want: []ruleOf{{"layers-divisible", "error", "last_stage_layers"}}},
		"two stages whose counts miss, interleaved": {edit: stages(2, 2, 2, 4, 4), hw: hgx(1),
			want: []ruleOf{{"layers-divisible", "error", "first_stage_layers"}}},
		"negative stage layers": {edit: stages(4, 1, 1, -1, 0), hw: hgx(1), want: []ruleOf{{"positive-degree", "error", "first_stage_layers"}}},
		"global batch": {edit: func(l *Layout, _ *model.Shape) { l.GlobalBatch = 250 }, hw: hgx(1),
			want: []ruleOf{{"global-batch-divisible", "error", "global_batch"}}},
		"seq over cp": {edit: func(l *Layout, s *model.Shape) { l.CP = 2; l.DP = 2; s.SeqLen = 4095; l.SequenceParallel = false }, hw: hgx(1),
			want: []ruleOf{{"seq-divisible-cp", "error", "cp"}}},
		"seq over cp*tp with sp": {edit: func(l *Layout, s *model.Shape) { s.SeqLen = 4097 }, hw: hgx(1),
			want: []ruleOf{{"seq-divisible-sp", "error", "tp"}}},
		"fp8 on a GPU without it": {edit: func(l *Layout, _ *model.Shape) { l.TP = 1; l.DP = 4; l.SequenceParallel = false }, hw: pcieBox(),
			want: []ruleOf{{"fp8-supported", "error", "precision"}}},
		"zero out of range": {edit: func(l *Layout, _ *model.Shape) { l.ZeRO = 4 }, hw: hgx(1),
			want: []ruleOf{{"zero-range", "error", "zero"}}},
		"zero with fsdp": {edit: func(l *Layout, _ *model.Shape) { l.ZeRO = 1; l.FSDP = true }, hw: hgx(1),
			want: []ruleOf{{"zero-fsdp-exclusive", "error", "fsdp"}}},
		"non-positive degrees stop further checks": {edit: func(l *Layout, _ *model.Shape) { l.DP = 0; l.MicroBatch = -1 }, hw: hgx(1),
			want: []ruleOf{{"positive-degree", "error", "dp"}, {"positive-degree", "error", "micro_batch"}}},
		"negative vp": {edit: func(l *Layout, _ *model.Shape) { l.VP = -1 }, hw: hgx(1),
			want: []ruleOf{{"positive-degree", "error", "vp"}}},
		"vp without pp": {edit: func(l *Layout, _ *model.Shape) { l.VP = 2 }, hw: hgx(1),
			want: []ruleOf{{"vp-requires-pp", "error", "vp"}}},
		"sp without tp": {edit: func(l *Layout, _ *model.Shape) { l.TP = 1; l.DP = 8; l.MicroBatch = 1; l.GlobalBatch = 8 }, hw: hgx(1),
			want: []ruleOf{{"sp-requires-tp", "warning", "sequence_parallel"}}},
		"unknown recompute and precision": {edit: func(l *Layout, _ *model.Shape) { l.Recompute = "some"; l.Precision = "fp4" }, hw: hgx(1),
			want: []ruleOf{{"recompute-known", "error", "recompute"}, {"precision-known", "error", "precision"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l, s := sound(), llama7b()
			tc.edit(&l, &s)
			fs := Validate(l, s, tc.hw, tc.gpus)
			var got []ruleOf
			for _, f := range fs {
				got = append(got, ruleOf{f.Rule, f.Severity, f.Field})
				if !strings.HasSuffix(f.Message, ".") || len(f.Message) < 30 {
					t.Errorf("%s: message %q is not a full sentence", f.Rule, f.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStageLayers(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		l      Layout
		layers int
		want   []int
		ok     bool
	}{
		"even":                            {l: Layout{PP: 4}, layers: 32, want: []int{8, 8, 8, 8}, ok: true},
		"one stage":                       {l: Layout{PP: 1}, layers: 5, want: []int{5}, ok: true},
		"first and last one fewer":        {l: Layout{PP: 16, FirstStageLayers: 7, LastStageLayers: 7}, layers: 126, want: append(append([]int{7}, repeat(8, 14)...), 7), ok: true},
		"embedding-balanced":              {l: Layout{PP: 12, FirstStageLayers: 5, LastStageLayers: 5}, layers: 70, want: append(append([]int{5}, repeat(6, 10)...), 5), ok: true},
		"first only":                      {l: Layout{PP: 3, FirstStageLayers: 2}, layers: 8, want: []int{2, 3, 3}, ok: true},
		"last only":                       {l: Layout{PP: 3, LastStageLayers: 4}, layers: 8, want: []int{2, 2, 4}, ok: true},
		"two stages, both set":            {l: Layout{PP: 2, FirstStageLayers: 3, LastStageLayers: 5}, layers: 8, want: []int{3, 5}, ok: true},
		"rest does not split":             {l: Layout{PP: 3, FirstStageLayers: 1}, layers: 8, want: []int{1, 3, 3}, ok: false},
		"nothing left for the rest":       {l: Layout{PP: 3, FirstStageLayers: 4, LastStageLayers: 4}, layers: 8, want: []int{4, 0, 4}, ok: false},
		"even split that does not divide": {l: Layout{PP: 3}, layers: 8, want: []int{2, 2, 2}, ok: false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := StageLayers(tt.l, tt.layers)
			if diff := cmp.Diff(tt.want, got); diff != "" || ok != tt.ok {
				t.Errorf("StageLayers ok = %v, want %v; counts (-want +got):\n%s", ok, tt.ok, diff)
			}
		})
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}
