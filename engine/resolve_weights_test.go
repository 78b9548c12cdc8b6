package engine

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine/model/hf"
)

// TestShapeDifferencesNameTheFilesKeys: a weights folder that does not fit
// the stage's model is told under the keys its own config.json uses,
// GPT2Config's for a GPT-2.
func TestShapeDifferencesNameTheFilesKeys(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		folder string
		want   []string
	}{
		"qwen2": {"sharded", []string{"num_hidden_layers = 1 where the model has layers = 2", "hidden_size = 8 where the model has hidden = 16"}},
		"gpt2":  {"gpt2", []string{"n_layer = 1 where the model has layers = 2", "n_embd = 8 where the model has hidden = 16"}},
		// The trainer reads the folder's window; a model without one
		// would be planned with attention it does not run.
		"mistral, the model without its window": {"mistral_window", []string{"num_hidden_layers = 1 where the model has layers = 2",
			"hidden_size = 8 where the model has hidden = 16",
			"sliding_window = 32 tokens in 1 of 1 layers where the model has sliding_window = none"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := hf.ReadConfig(filepath.Join("model", "hf", "testdata", "folders", tc.folder))
			if err != nil {
				t.Fatal(err)
			}
			want := c.Shape()
			want.Layers, want.Hidden, want.Window, want.WindowLayers = 2, 16, 0, 0
			if diff := cmp.Diff(tc.want, shapeDifferences(c, want)); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}
