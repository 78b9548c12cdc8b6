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
// relative to the workload, keeping the workload's own seq_len.
func TestModelFromFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	folder, err := filepath.Abs(filepath.Join("model", "hf", "testdata", "folders", "sharded"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(folder, filepath.Join(dir, "qwen")); err != nil {
		t.Fatal(err)
	}
	src := "model \"m\" {\n  from    = \"qwen\"\n  seq_len = 32\n  hidden  = 8\n}\n"
	path := filepath.Join(dir, "w.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	w, diags := engine.LoadWorkload(path, dsl.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := model.Shape{Layers: 1, Hidden: 8, FFNHidden: 16, Heads: 2, KVHeads: 1, Vocab: 16, SeqLen: 32,
		Activation: model.ActivationSwiGLU, Architecture: "Qwen2ForCausalLM", From: "qwen"}
	if diff := cmp.Diff(want, w.Models["m"]); diff != "" {
		t.Errorf("shape differs (-want +got):\n%s", diff)
	}
}
