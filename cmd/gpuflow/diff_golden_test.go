package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// textEdit replaces one passage of an example workload.
type textEdit struct{ from, to string }

// diffScenarios are realistic pull requests against the example
// workloads: NEW is the workload with edits applied, OLD the workload with
// oldEdits applied (a stage added in the pull request is removed from OLD).
var diffScenarios = map[string]struct {
	workload        string
	edits, oldEdits []textEdit
}{
	"tp-dp-swap": {workload: "7b-pretrain", edits: []textEdit{
		{"layout \"tp2dp4\" {\n  tp           = 2\n  pp           = 1\n  dp           = 4", "layout \"tp4dp2\" {\n  tp           = 4\n  pp           = 1\n  dp           = 2"},
		{"layout.tp2dp4", "layout.tp4dp2"},
	}},
	"nodes-doubled": {workload: "qwen2-7b-lora", edits: []textEdit{
		{"description = \"Nebius 8x H100 nodes to train on.\"\n  default     = 1", "description = \"Nebius 8x H100 nodes to train on.\"\n  default     = 2"},
	}},
	"precision-fp8": {workload: "qwen2-7b-lora", edits: []textEdit{
		{`precision    = "bf16"`, `precision    = "fp8"`},
	}},
	"micro-batch": {workload: "7b-pretrain", edits: []textEdit{
		{"micro_batch  = 4", "micro_batch  = 8"},
	}},
	"micro-batch-near-limit": {workload: "70b-multinode", edits: []textEdit{
		{"micro_batch = 2", "micro_batch = 3"},
	}},
	"stage-added": {workload: "7b-pretrain", oldEdits: []textEdit{
		{afterStage7b, ""},
	}},
	"dataset-changed": {workload: "7b-pretrain", edits: []textEdit{
		{`default     = "data/raw/fineweb-edu/*.parquet"`, `default     = "data/raw/fineweb-edu-100bt/*.parquet"`},
	}},
	"job-time-limit": {workload: "70b-multinode", edits: []textEdit{
		{`time_limit    = "48h"`, `time_limit    = "72h"`},
	}},
	"hardware-profile": {workload: "7b-pretrain", edits: []textEdit{
		{`profile = "dell-xe9780-b300"`, `profile = "hgx-b200-8"`},
	}},
}

// afterStage7b is the post-run check of workloads/7b-pretrain.hcl.
const afterStage7b = `stage "benchmark" "after" {
  depends_on = [stage.pretrain.llama7b]
  hardware   = hardware.xe9780

  health {}

  gemm {
    dtypes = ["bf16"]
    expect {
      min_tflops = { bf16 = local.accept.bf16_tflops }
    }
  }
}
`

// TestDiffGolden diffs each scenario in the three formats and compares
// them with golden files. Paths under the test's directory read $TMP.
func TestDiffGolden(t *testing.T) {
	t.Parallel()
	for name, sc := range diffScenarios {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src, err := os.ReadFile(filepath.Join("..", "..", "workloads", sc.workload+".hcl"))
			if err != nil {
				t.Fatal(err)
			}
			old := writeEdited(t, filepath.Join(dir, "old", sc.workload+".hcl"), string(src), sc.oldEdits)
			new := writeEdited(t, filepath.Join(dir, "new", sc.workload+".hcl"), string(src), sc.edits)
			for _, f := range []struct{ suffix, flag string }{{".txt", "-no-color"}, {".json", "-json"}, {".md", "-format=markdown"}} {
				var stdout, stderr bytes.Buffer
				if code := run([]string{"diff", f.flag, old, new}, testEnv(&stdout, &stderr)); code != exitChanges {
					t.Fatalf("diff %s exited %d, want %d:\n%s", f.flag, code, exitChanges, stderr.String())
				}
				checkGolden(t, "diff/"+name+f.suffix, []byte(strings.ReplaceAll(stdout.String(), dir, "$TMP")))
			}
		})
	}
}

// writeEdited writes src with edits applied to path; an edit whose text
// the workload no longer holds fails the test, so scenarios follow the
// examples as they change.
func writeEdited(t *testing.T, path, src string, edits []textEdit) string {
	t.Helper()
	for _, e := range edits {
		if !strings.Contains(src, e.from) {
			t.Fatalf("workload no longer contains %q; update the scenario", e.from)
		}
		src = strings.Replace(src, e.from, e.to, 1)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
