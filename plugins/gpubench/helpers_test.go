package gpubench

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/hardware"
	"github.com/gpuflow/gpuflow/plugins/api"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// h200x4 is the built-in h200-x4 machine (4x H200), as workloads see hardware.lab.
func h200x4() *hardware.Profile {
	return &hardware.Profile{
		Name: "h200-x4", Nodes: 1,
		GPU: hardware.GPU{Model: "H200 141GB SXM", PerNode: 4, MemoryBytes: 143771 << 20,
			TFLOPS: map[string]float64{"bf16": 989, "fp16": 989, "fp8": 1979, "tf32": 494}, HBMBytesPerS: 4.8e12},
		Interconnect: hardware.Interconnect{Kind: "nvlink4", DomainSize: 4},
		Network:      hardware.Network{Kind: hardware.NetworkNone},
	}
}

// decodeHCL decodes a stage body as the engine does: with the stage
// schema's spec, hardware.lab in scope.
func decodeHCL(t *testing.T, src string) cty.Value {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(src), "stage.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{
		"hardware": cty.ObjectVal(map[string]cty.Value{"lab": h200x4().Value()}),
		"later":    cty.UnknownVal(cty.Number),
	}}
	v, diags := hcldec.Decode(f.Body, api.StageDecoderSpec(StageSchema(), StageContract()), ctx)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return v
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}
