package slurm

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// renderCases are scripts whose every line a reviewer can check in
// testdata/NAME.sbatch.
var renderCases = map[string]Job{
	"minimal": {Stage: "exec.hello", Plugin: "exec", Executor: "executor.slurm.test"},
	"full": {Stage: "pretrain.llama", Plugin: "train", Executor: "executor.slurm.big",
		Partition: "gpu", Account: "ml-team", QoS: "high", TimeLimit: 50 * time.Hour, Nodes: 2, GPUsPerNode: 8,
		CPUsPerTask: 96, Exclusive: true, ContainerImage: "nvcr.io#nvidia/pytorch:25.01-py3",
		ExtraSbatch: []string{"--mem=0", "--constraint=b300"},
		Env:         []EnvVar{{"OMP_NUM_THREADS", "8"}, {"QUOTED", "it's a value"}},
		NCCLEnv:     []EnvVar{{"NCCL_IB_HCA", "mlx5"}, {"NCCL_SOCKET_IFNAME", "^lo,docker"}},
		Rendezvous:  true, Retries: 1},
}

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	for name, job := range renderCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := Render(job)
			path := filepath.Join("testdata", name+".sbatch")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestRenderGolden -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s differs (-want +got):\n%s\nIf the change is intended, run with -update.", path, diff)
			}
		})
	}
}

// TestRenderIsValidBash has bash parse every rendered script.
func TestRenderIsValidBash(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	for name, job := range renderCases {
		path := filepath.Join(t.TempDir(), name+".sbatch")
		if err := os.WriteFile(path, []byte(Render(job)), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", name, err, out)
		}
	}
}
