package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
)

// TestPlanExecutor checks what the plan says of a stage's executor: the
// nodes and GPUs the stage claims unless the executor says otherwise, the
// retry default, and a script that carries the plan's NCCL environment.
func TestPlanExecutor(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		executor string
		want     *engine.ExecutorPlan
		inScript []string
	}{
		"from the stage's claims": {
			executor: `partition = "gpu"`,
			want:     &engine.ExecutorPlan{Address: "executor.slurm.e", Kind: "slurm", Nodes: 2, GPUsPerNode: 8, Retries: 1},
			inScript: []string{"#SBATCH --partition=gpu\n", "#SBATCH --nodes=2\n", "#SBATCH --gpus-per-node=8\n",
				"export NCCL_DEBUG=WARN\n", "GPUFLOW_TORCHRUN_ARGS=", "--nproc-per-node=8"},
		},
		"as the executor says": {
			executor: "time_limit = \"90m\"\n  retries = 0\n  gpus_per_node = 8\n  exclusive = true",
			want: &engine.ExecutorPlan{Address: "executor.slurm.e", Kind: "slurm", Nodes: 2, GPUsPerNode: 8,
				TimeLimitS: 5400, Retries: 0},
			inScript: []string{"#SBATCH --time=01:30:00\n", "#SBATCH --exclusive\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "main.hcl")
			src := "hardware \"h\" {\n  profile = \"nebius-h100-8\"\n  nodes = 2\n}\nexecutor \"slurm\" \"e\" {\n  " + tc.executor +
				"\n}\nstage \"probe\" \"p\" {\n  hardware = hardware.h\n  executor = executor.slurm.e\n}\nstage \"probe\" \"local\" {}\n"
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			w, diags := engine.LoadWorkload(path, dsl.Inputs{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			plan, diags := engine.BuildPlan(context.Background(), w, engine.PlanOptions{Plugins: testPlugins(t)})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			byAddr := map[string]*engine.StagePlan{}
			for _, sp := range plan.Stages {
				byAddr[sp.Address] = sp
			}
			if byAddr["probe.local"].Executor != nil {
				t.Errorf("a stage without an executor got %+v; it runs locally", byAddr["probe.local"].Executor)
			}
			got := byAddr["probe.p"].Executor
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(engine.ExecutorPlan{}, "Script")); diff != "" {
				t.Errorf("executor (-want +got):\n%s", diff)
			}
			for _, s := range tc.inScript {
				if got != nil && !strings.Contains(got.Script, s) {
					t.Errorf("script lacks %q:\n%s", s, got.Script)
				}
			}
		})
	}
}
