package engine_test

import (
	"os"
	"path/filepath"
	"strings"
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
		err          string
	}{
		"qwen2": {folder: "sharded", body: "  seq_len = 32\n  hidden  = 8\n",
			want: model.Shape{Layers: 1, Hidden: 8, FFNHidden: 16, Heads: 2, KVHeads: 1, Vocab: 16, SeqLen: 32,
				Activation: model.ActivationSwiGLU, Architecture: "Qwen2ForCausalLM", From: "m"}},
		"mistral beyond its window": {folder: "mistral_window", body: "  seq_len = 64\n",
			want: model.Shape{Layers: 1, Hidden: 8, FFNHidden: 16, Heads: 2, KVHeads: 1, Vocab: 16, SeqLen: 64,
				Activation: model.ActivationSwiGLU, Window: 32, WindowLayers: 1, Architecture: "MistralForCausalLM", From: "m"}},
		"gpt2": {folder: "gpt2", body: "  seq_len = 32\n  activation = \"gelu\"\n",
			want: model.Shape{Layers: 1, Hidden: 8, FFNHidden: 32, Heads: 2, KVHeads: 2, Vocab: 16, SeqLen: 32, TiedEmbeddings: true,
				Activation: model.ActivationGELU, Architecture: "GPT2LMHeadModel", From: "m"}},
		"gpt2 contradicted": {folder: "gpt2", body: "  seq_len = 32\n  hidden = 16\n",
			err: "w.hcl:4,12-14: Model argument contradicts config.json; hidden = 16, but the folder's config.json has n_embd = 8"},
		"gpt2 past its positions": {folder: "gpt2", body: "  seq_len = 128\n",
			err: "w.hcl:3,13-16: Sequence longer than the position table; GPT-2 learns one position embedding per position, and the folder's table has n_positions = 64 rows; seq_len is 128"},
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
			if tc.err != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.err) {
					t.Fatalf("diagnostics = %v, want one containing %q", diags, tc.err)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if diff := cmp.Diff(tc.want, w.Models["m"]); diff != "" {
				t.Errorf("shape differs (-want +got):\n%s", diff)
			}
		})
	}
}
