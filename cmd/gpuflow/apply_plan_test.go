package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestApplyPlansAsPlanDoes plans the plan_calibrated script's workload
// with its calibration in place, then starts an apply of the same file and
// declines it: the plan apply shows for approval must be the one plan
// printed, estimates included. It changes the working directory, where the
// calibration file is looked for, so it cannot run in parallel.
func TestApplyPlansAsPlanDoes(t *testing.T) {
	dir := t.TempDir()
	extractScriptFiles(t, "testdata/script/plan_calibrated.txtar", dir)
	t.Chdir(dir)
	if err := os.MkdirAll(".gpuflow", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename("cal.json", ".gpuflow/calibration.json"); err != nil {
		t.Fatal(err)
	}
	var planOut, planErr bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &planOut, stderr: &planErr, environ: []string{"NO_COLOR=1"}}
	if code := run([]string{"plan", "w.hcl"}, env); code != 0 {
		t.Fatalf("plan exited %d: %s", code, planErr.String())
	}
	var applyOut, applyErr bytes.Buffer
	env = &cliEnv{stdin: strings.NewReader("no\n"), stdout: &applyOut, stderr: &applyErr, isTerminal: true, environ: []string{"NO_COLOR=1"}}
	if code := run([]string{"apply", "w.hcl"}, env); code != 1 {
		t.Fatalf("declined apply exited %d, want 1: %s", code, applyErr.String())
	}
	shown, _, found := strings.Cut(applyOut.String(), "\nRun these stages?")
	if !found {
		t.Fatalf("apply did not ask for approval:\n%s", applyOut.String())
	}
	if diff := cmp.Diff(planOut.String(), shown); diff != "" {
		t.Errorf("apply's plan differs from plan's (-plan +apply):\n%s", diff)
	}
}

// extractScriptFiles writes a testscript archive's files into dir.
func extractScriptFiles(t *testing.T, archive, dir string) {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
