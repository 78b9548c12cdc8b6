package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
)

// TestSlurmScriptsGolden renders the job script of every stage of the
// 70b-multinode workload, which runs both its stages through Slurm, into
// testdata/golden/70b-multinode.STAGE.sbatch, and has bash parse each.
func TestSlurmScriptsGolden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, diags := engine.LoadWorkload("../../workloads/70b-multinode.hcl", dsl.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	plugins, err := loadPlugins(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer plugins.Close()
	plan, diags := engine.BuildPlan(ctx, w, engine.PlanOptions{Plugins: plugins, Version: version})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	rendered := 0
	for _, sp := range plan.Stages {
		if sp.Executor == nil {
			t.Errorf("stage %s has no executor; the workload runs every stage through Slurm", sp.Address)
			continue
		}
		rendered++
		checkGolden(t, "70b-multinode."+sp.Address+".sbatch", []byte(sp.Executor.Script))
		checkBashSyntax(t, sp.Executor.Script)
	}
	if rendered != 2 {
		t.Errorf("rendered %d scripts, want the benchmark's and the training's", rendered)
	}
}

func checkBashSyntax(t *testing.T, script string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		return
	}
	path := filepath.Join(t.TempDir(), "job.sbatch")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s", err, out)
	}
}
