package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
)

// fileLevelErrors are the summaries of errors about a workload file as a
// whole (dsl.Load), which have no source range to point at. Every other
// error must have one.
var fileLevelErrors = map[string]bool{
	"Workload not found":        true,
	"Cannot read workload file": true,
	"No workload files":         true,
}

// FuzzPlan feeds arbitrary source through parse, decode, validation and
// planning, as gpuflow plan does. Whatever the input, nothing may panic,
// every error must point into the file (or be a file-level error), the
// diagnostics must render with their source lines, and a plan without
// errors must encode as JSON.
//
// Run it with: go test -run='^$' -fuzz=FuzzPlan -fuzztime=3m -parallel=1 ./engine/
func FuzzPlan(f *testing.F) {
	for _, pattern := range []string{"../workloads/*.hcl", "testdata/invalid/*.hcl"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			src, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	for _, src := range edgeCases() {
		f.Add(src)
	}
	plugins := testPlugins(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.hcl")
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		checkPlan(t, path, plugins)
	})
}

// checkPlan plans path and checks the properties FuzzPlan promises.
func checkPlan(t *testing.T, path string, plugins engine.Plugins) {
	t.Helper()
	ctx := context.Background()
	w, diags := engine.LoadWorkload(path, dsl.Inputs{})
	var plan *engine.Plan
	if diags.HasErrors() {
		diags = append(diags, w.CheckStages(ctx, plugins)...)
	} else {
		var pdiags hcl.Diagnostics
		plan, pdiags = engine.BuildPlan(ctx, w, engine.PlanOptions{Plugins: plugins})
		diags = append(diags, pdiags...)
	}
	for _, d := range diags {
		if d.Severity != hcl.DiagError || fileLevelErrors[d.Summary] {
			continue
		}
		if d.Subject == nil || d.Subject.Filename != path {
			t.Errorf("error %q (%s) does not point into the workload: subject %v", d.Summary, d.Detail, d.Subject)
		}
	}
	files := map[string]*hcl.File{}
	for name, src := range w.Config.Sources {
		files[name] = &hcl.File{Bytes: src}
	}
	if err := hcl.NewDiagnosticTextWriter(io.Discard, files, 100, false).WriteDiagnostics(diags); err != nil {
		t.Errorf("rendering diagnostics: %v", err)
	}
	if diags.HasErrors() {
		return
	}
	if plan == nil {
		t.Fatal("no errors but no plan")
	}
	if _, err := json.Marshal(plan); err != nil {
		t.Errorf("plan does not encode as JSON: %v", err)
	}
}

// edgeCases are inputs no workload would hold but a user's disk might:
// nothing, garbage, depth, extreme numbers, unicode, NUL bytes.
func edgeCases() [][]byte {
	const depth = 10000
	return [][]byte{
		{},
		{0x00},
		[]byte("\xff\xfe\x00\x01garbage\x80\x81\xc3\x28\xed\xa0\x80"),
		bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 64),
		[]byte("\ufeffhardware \"h\" {\r\n  profile = \"h100-x1\"\r\n}\r\n"),
		[]byte("locals {\n  x = " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n}\n"),
		[]byte("locals {\n  x = " + strings.Repeat("{a = ", depth) + "1" + strings.Repeat("}", depth) + "\n}\n"),
		[]byte("locals {\n  x = " + strings.Repeat("(", depth) + "1" + strings.Repeat(")", depth) + "\n}\n"),
		[]byte(strings.Repeat("stage \"probe\" \"p\" {\n", depth)),
		[]byte("model \"m\" {\n  preset = \"llama2-7b\"\n  layers = 1e400\n  hidden = -1e400\n  vocab  = 1e-400\n}\n"),
		[]byte("layout \"l\" {\n  tp = 99999999999999999999999999\n  dp = 2147483647\n  pp = 2147483647\n  micro_batch = 2147483647\n  global_batch = -2147483648\n}\n"),
		[]byte("hardware \"h\" {\n  profile = \"h100-x1\"\n  nodes = 1e400\n}\n"),
		[]byte("stage \"probe\" \"p\" {\n  count = 1e400\n  ratio = -1e-400\n}\n"),
		[]byte("locals {\n  inf = pow(2, 1e9)\n  nan = local.inf - local.inf\n}\n"),
		[]byte("locals {\n  名前 = \"値 🚀\"\n  ünï = \"\\u0000\"\n}\nstage \"probe\" \"ñame\" {\n  input = local.名前\n}\n"),
		[]byte("model \"m\x00\" {\n  preset = \"llama2-7b\x00\"\n}\n\x00"),
		[]byte("stage \"probe\" \"a\" {\n  input = \"${stage.probe.b.outputs.x}\"\n}\nstage \"probe\" \"b\" {\n  depends_on = [stage.probe.a]\n}\n"),
	}
}
