package train

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

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
