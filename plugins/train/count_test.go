package train

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// TestCountReadsTheWindow: a run's FLOPs per token count the sliding
// window the model value carries as the plan does: the window's span in
// place of seq_len in the layers it applies to.
func TestCountReadsTheWindow(t *testing.T) {
	t.Parallel()
	tests := map[string]struct{ window, windowed int }{
		"no window":              {0, 0},
		"every layer":            {32, 4},
		"from layer 3":           {32, 1},
		"longer than a sequence": {256, 4},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := defaultBody(cty.StringVal("data/train-00000"))
			body.window, body.windowed = tc.window, tc.windowed
			args, diags := readArgs(body.value())
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			cfg := runConfig{Model: args.Model}
			if diags := countModel(&cfg); diags.HasErrors() {
				t.Fatal(diags)
			}
			s := countShape(modelConfig{Layers: body.layers, Hidden: 256, FFNHidden: 768, Heads: 4, KVHeads: body.kvHeads, Vocab: 1024, SeqLen: 128, Activation: "swiglu"})
			s.Window, s.WindowLayers = tc.window, tc.windowed
			want := counts.ModelFLOPs(counts.Count(s).Total(s.Layers), 0, counts.AttentionFLOPs(s))
			if diff := cmp.Diff(want, cfg.FLOPsPerToken); diff != "" {
				t.Errorf("FLOPs per token (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCountRefusesLoRA: adapters the counts cannot place are an error at
// lora.targets whose detail is the counts' own reason.
func TestCountRefusesLoRA(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		activation string
		lora       loraConfig
		path, want string
	}{
		"no such layer": {"swiglu", loraConfig{Rank: 8, Targets: []string{"q_proj", "lm_head"}}, "lora.targets", `LoRA target "lm_head" is not a linear layer of this model`},
		"gate in GPT-2": {activationGELU, loraConfig{Rank: 8, Targets: []string{"gate_proj"}}, "lora.targets", `LoRA target "gate_proj" is not a linear layer of this model`},
		"zero rank":     {"swiglu", loraConfig{Rank: 0, Targets: []string{"q_proj"}}, "lora.rank", "LoRA rank is 0; it must be 1 or more"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := modelConfig{Layers: 2, Hidden: 64, FFNHidden: 128, Heads: 4, KVHeads: 2, Vocab: 128, SeqLen: 32, Activation: tc.activation}
			cfg := runConfig{Model: m, LoRA: &tc.lora}
			diags := countModel(&cfg)
			if len(diags) != 1 || api.PathString(diags[0].Path) != tc.path || !strings.HasPrefix(diags[0].Detail, tc.want) {
				t.Errorf("diagnostics %v, want one error at %s whose detail starts %q", diags, tc.path, tc.want)
			}
		})
	}
}
