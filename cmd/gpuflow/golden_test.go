package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// testEnv runs verbs with captured output, no terminal and no colour, in
// the real working directory. The h200-lab workload's text corpora default
// to files of this machine's Debian packages, which differ from machine to
// machine, so the goldens point them at fixed files (paths are relative
// to the workload's folder).
func testEnv(stdout, stderr *bytes.Buffer) *cliEnv {
	return &cliEnv{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, environ: []string{
		"NO_COLOR=1",
		"GPUFLOW_VAR_corpus=../cmd/gpuflow/testdata/corpus/a.txt",
		"GPUFLOW_VAR_finetune_text=../cmd/gpuflow/testdata/corpus/b.txt",
	}}
}

// checkGolden compares got with testdata/golden/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/gpuflow -run %s -update to create it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s\nIf the change is intended, run with -update.", path, diff)
	}
}

// TestPlanGolden plans every example workload and compares the human and
// JSON plans with golden files.
func TestPlanGolden(t *testing.T) {
	workloads, err := filepath.Glob("../../workloads/*.hcl")
	if err != nil || len(workloads) == 0 {
		t.Fatalf("no workloads found: %v", err)
	}
	for _, wl := range workloads {
		name := strings.TrimSuffix(filepath.Base(wl), ".hcl")
		for _, format := range []struct{ suffix, flag string }{{".plan.txt", "-no-color"}, {".plan.json", "-json"}} {
			t.Run(name+format.suffix, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				args := []string{"plan", format.flag, "-state", filepath.Join(t.TempDir(), "none.json"), wl}
				if code := run(args, testEnv(&stdout, &stderr)); code != 0 {
					t.Fatalf("plan %s exited %d:\n%s", wl, code, stderr.String())
				}
				checkGolden(t, name+format.suffix, stdout.Bytes())
			})
		}
	}
}
