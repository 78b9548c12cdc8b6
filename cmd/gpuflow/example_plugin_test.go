package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/plugins/client"
)

// estimateWorkload trains one model two ways: with the built-in pretrain
// stage and with the example plugin's hello_train, which declares its
// token budget in its contract.
const estimateWorkload = `
hardware "lab" {
  profile = "h200-x1"
}

model "m" {
  preset = "llama3.2-1b"
}

layout "one" {
  dp           = 1
  micro_batch  = 4
  global_batch = 4
}

stage "pretrain" "builtin" {
  hardware     = hardware.lab
  model        = model.m
  layout       = layout.one
  data         = "shards/"
  train_tokens = 1e9
  lr           = 0.0003
}

stage "hello_train" "external" {
  hardware = hardware.lab
  model    = model.m
  layout   = layout.one
  tokens   = 1e9
}
`

// TestExamplePluginGetsAnEstimate builds the example plugin, which the
// engine knows nothing about, and plans a stage of its training-like type:
// from its contract alone it gets the estimate the built-in trainer's
// stage gets for the same model, layout, hardware and budget. It sets the
// plugin search path in the environment, so it cannot run in parallel.
func TestExamplePluginGetsAnEstimate(t *testing.T) {
	pluginDir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(pluginDir, "gpuflow-plugin-hello"), "../../plugins/example/gpuflow-plugin-hello")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Setenv(client.PathEnv, pluginDir)
	path := filepath.Join(t.TempDir(), "w.hcl")
	if err := os.WriteFile(path, []byte(estimateWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, environ: []string{"NO_COLOR=1"}}
	if code := run([]string{"plan", "-json", "-state", filepath.Join(t.TempDir(), "state.json"), path}, env); code != 0 {
		t.Fatalf("plan exited %d: %s", code, errOut.String())
	}
	var plan engine.Plan
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatal(err)
	}
	estimates := map[string]json.RawMessage{}
	for _, sp := range plan.Stages {
		b, err := json.Marshal(sp.Estimate)
		if err != nil {
			t.Fatal(err)
		}
		estimates[sp.Type] = b
	}
	if sp := stageByType(plan, "hello_train"); sp == nil || sp.Estimate == nil || sp.Estimate.TokensPerS <= 0 || sp.Estimate.DurationS <= 0 {
		t.Fatalf("hello_train has no estimate with a throughput and a duration:\n%s", estimates["hello_train"])
	}
	if diff := cmp.Diff(string(estimates["pretrain"]), string(estimates["hello_train"])); diff != "" {
		t.Errorf("estimates differ (-pretrain +hello_train):\n%s", diff)
	}
}

func stageByType(plan engine.Plan, stageType string) *engine.StagePlan {
	for _, sp := range plan.Stages {
		if sp.Type == stageType {
			return sp
		}
	}
	return nil
}
