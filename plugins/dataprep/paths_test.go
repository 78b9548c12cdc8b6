package dataprep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// A host may send the workload's folder relative to the folder the plugin
// runs in; every path among the outputs is absolute all the same, so the
// stage reading them does not resolve them a second time.
func TestApplyOutputsAbsolutePaths(t *testing.T) {
	t.Parallel()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rel, err := filepath.Rel(cwd, dir)
	if err != nil {
		t.Fatal(err)
	}
	writeLines(t, filepath.Join(dir, "a.txt"), "One plain document.")
	body := fmt.Sprintf(`
inputs     = ["*.txt"]
format     = "text"
tokenizer {
  type = "tiktoken"
  path = %q
}
output_dir = "data/out"
split {
  train = 1
}
`, vocabPath(t, "r50k_base.tiktoken.gz"))
	resp, err := New().ApplyStage(context.Background(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: StageType, Name: "x", Config: decodeBody(t, body), WorkDir: rel},
		RunDir:       t.TempDir(),
	}, &recorder{})
	if err != nil || resp.Diagnostics.HasErrors() {
		t.Fatalf("apply: %v %+v", err, resp)
	}
	paths := []cty.Value{resp.Outputs["output_dir"], resp.Outputs["manifest"]}
	paths = append(paths, resp.Outputs["train"].GetAttr("paths").AsValueSlice()...)
	for _, p := range paths {
		if !filepath.IsAbs(p.AsString()) {
			t.Errorf("output path %q is not absolute", p.AsString())
		}
	}
	if got, want := resp.Outputs["output_dir"].AsString(), filepath.Join(dir, "data/out"); got != want {
		t.Errorf("output_dir = %q, want %q", got, want)
	}
}
