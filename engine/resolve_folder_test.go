package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/model"
)

// TestModelFromFolder reads a model's shape from a Hugging Face folder,
// relative to the workload, keeping the workload's own seq_len, also one
// longer than a Mistral's sliding window, whose span the shape carries.
func TestModelFromFolder(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		folder, body string
		want         model.Shape
	}{
		"qwen2": {"sharded", "  seq_len = 32\n  hidden  = 8\n", model.Shape{Layers: 1, Hidden: 8, FFNHidden: 16, Heads: 2, KVHeads: 1,
			Vocab: 16, SeqLen: 32, Activation: model.ActivationSwiGLU, Architecture: "Qwen2ForCausalLM", From: "m"}},
		"mistral beyond its window": {"mistral_window", "  seq_len = 64\n", model.Shape{Layers: 1, Hidden: 8, FFNHidden: 16, Heads: 2,
			KVHeads: 1, Vocab: 16, SeqLen: 64, Activation: model.ActivationSwiGLU, Window: 32, WindowLayers: 1,
			Architecture: "MistralForCausalLM", From: "m"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			folder, err := filepath.Abs(filepath.Join("model", "hf", "testdata", "folders", tc.folder))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(folder, filepath.Join(dir, "m")); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "w.hcl")
			if err := os.WriteFile(path, []byte("model \"m\" {\n  from    = \"m\"\n"+tc.body+"}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			w, diags := engine.LoadWorkload(path, dsl.Inputs{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if diff := cmp.Diff(tc.want, w.Models["m"]); diff != "" {
				t.Errorf("shape differs (-want +got):\n%s", diff)
			}
		})
	}
}
