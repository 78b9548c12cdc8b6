package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/client"
)

// TestThroughHost builds this plugin, finds it the way gpuflow does, and
// runs a stage written in HCL through it: decode with the plugin's schema,
// validate (a diagnostic lands on its attribute), apply.
func TestThroughHost(t *testing.T) {
	t.Parallel()
	pluginDir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(pluginDir, "gpuflow-plugin-hello"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := map[string]string{client.PathEnv: pluginDir}
	m, err := client.NewManager(client.Options{Dirs: client.SearchDirs(t.TempDir(), "", func(k string) string { return env[k] })})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p, err := m.Provider(t.Context(), "hello")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := p.Schema(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	spec := schema.StageTypes["hello"].DecoderSpec()

	body, config := decodeStage(t, "stage \"hello\" \"bad\" {\n  name = \"\"\n  file = \"../escape\"\n}\n", spec)
	diags, err := p.ValidateStage(t.Context(), &api.StageRequest{Type: "hello", Name: "bad", Config: config})
	if err != nil {
		t.Fatal(err)
	}
	var where []string
	for _, d := range api.ToHCL(diags, body, spec) {
		where = append(where, d.Subject.String()+" "+d.Summary)
	}
	want := []string{"main.hcl:2,10-12 Empty name", "main.hcl:3,10-21 File outside the run directory"}
	if diff := cmp.Diff(want, where); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}

	_, config = decodeStage(t, "stage \"hello\" \"ok\" {\n  name = \"gpuflow\"\n}\n", spec)
	runDir := t.TempDir()
	resp, err := p.ApplyStage(t.Context(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: "hello", Name: "ok", Config: config},
		RunDir:       runDir,
	}, api.EventSinkFunc(func(api.Event) {}))
	if err != nil || resp.Diagnostics.HasErrors() {
		t.Fatalf("apply: %v %v", err, resp)
	}
	wantPath := filepath.Join(runDir, "greeting.txt")
	if !resp.Outputs["path"].RawEquals(cty.StringVal(wantPath)) {
		t.Errorf("path output = %#v", resp.Outputs["path"])
	}
	if got, _ := os.ReadFile(wantPath); string(got) != "Hello, gpuflow!\n" {
		t.Errorf("greeting file holds %q", got)
	}
}

// decodeStage parses one stage block and decodes its body with spec.
func decodeStage(t *testing.T, src string, spec hcldec.Spec) (hcl.Body, cty.Value) {
	t.Helper()
	file, diags := hclsyntax.ParseConfig([]byte(src), "main.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	content, diags := file.Body.Content(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "stage", LabelNames: []string{"type", "name"}}},
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	body := content.Blocks[0].Body
	config, diags := hcldec.Decode(body, spec, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return body, config
}
