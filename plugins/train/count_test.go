package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// TestCountReadsTheWindow: a run's FLOPs per token count a sliding
// window set in the model folder's config.json as the plan does: the
// window's span in place of seq_len in the layers it applies to.
func TestCountReadsTheWindow(t *testing.T) {
	t.Parallel()
	shape := modelConfig{Layers: 4, Hidden: 64, FFNHidden: 128, Heads: 4, KVHeads: 2, Vocab: 128, SeqLen: 64, Activation: "swiglu"}
	tests := map[string]struct {
		config        string
		window, layer int
	}{
		"mistral":            {`{"architectures": ["MistralForCausalLM"], "sliding_window": 16}`, 16, 4},
		"qwen2 from layer 3": {`{"architectures": ["Qwen2ForCausalLM"], "sliding_window": 16, "use_sliding_window": true, "max_window_layers": 3}`, 16, 1},
		"qwen2 unused":       {`{"architectures": ["Qwen2ForCausalLM"], "sliding_window": 16, "use_sliding_window": false}`, 0, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, hfConfigFile), []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := runConfig{Model: shape}
			cfg.Model.HF = dir
			if diags := countModel(&cfg); diags.HasErrors() {
				t.Fatal(diags)
			}
			s := countShape(shape)
			s.Window, s.WindowLayers = tc.window, tc.layer
			want := counts.ModelFLOPs(counts.Count(s).Total(s.Layers), 0, counts.AttentionFLOPs(s))
			if diff := cmp.Diff(want, cfg.FLOPsPerToken); diff != "" {
				t.Errorf("FLOPs per token (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCountRefusesAnUnreadableFolder: a model folder whose config.json
// cannot be read is an error at model that says what to point from at.
func TestCountRefusesAnUnreadableFolder(t *testing.T) {
	t.Parallel()
	tests := map[string]string{"no config.json": "", "not JSON": "{"}
	for name, config := range tests {
		dir := t.TempDir()
		if config != "" {
			if err := os.WriteFile(filepath.Join(dir, hfConfigFile), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfg := runConfig{Model: modelConfig{Layers: 1, Hidden: 8, FFNHidden: 16, Heads: 2, KVHeads: 1, Vocab: 16, SeqLen: 8, HF: dir}}
		diags := countModel(&cfg)
		if !diags.HasErrors() || api.PathString(diags[0].Path) != "model" || !strings.Contains(diags[0].Detail, "Point the model block's from at") {
			t.Errorf("%s: diagnostics %v, want an error at model that says where to point from", name, diags)
		}
	}
}
