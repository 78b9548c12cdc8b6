package dsl

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
)

func loadString(t *testing.T, src string) (*Config, hcl.Diagnostics) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "main.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(path, Inputs{})
}

func ptr[T any](v T) *T { return &v }

func TestExecutorDecodes(t *testing.T) {
	t.Parallel()
	cfg, diags := loadString(t, `
variable "partition" { default = "gpu" }
executor "slurm" "big" {
  partition       = var.partition
  account         = "ml"
  qos             = "high"
  time_limit      = "4h"
  nodes           = 2
  gpus_per_node   = 8
  cpus_per_task   = 96
  exclusive       = true
  container_image = "nvcr.io#nvidia/pytorch:25.01-py3"
  retries         = 2
  extra_sbatch    = ["--mem=0", "--constraint=b300"]
  env             = { OMP_NUM_THREADS = "8" }
}
stage "exec" "x" {
  executor = executor.slurm.big
  command  = ["true"]
}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := ExecutorSpec{Partition: ptr("gpu"), Account: ptr("ml"), QoS: ptr("high"), TimeLimit: ptr("4h"),
		Nodes: ptr(2), GPUsPerNode: ptr(8), CPUsPerTask: ptr(96), Exclusive: ptr(true),
		ContainerImage: ptr("nvcr.io#nvidia/pytorch:25.01-py3"), Retries: ptr(2),
		ExtraSbatch: []string{"--mem=0", "--constraint=b300"}, Env: map[string]string{"OMP_NUM_THREADS": "8"}}
	e := cfg.Executors["slurm.big"]
	if e == nil || !e.Decoded {
		t.Fatalf("executor slurm.big not decoded: %+v", e)
	}
	if diff := cmp.Diff(want, e.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	ref := cfg.Stages[0].Executor
	if diff := cmp.Diff(&ExecutorRef{Kind: "slurm", Name: "big"}, ref, cmpopts.IgnoreFields(ExecutorRef{}, "Range")); diff != "" {
		t.Errorf("stage executor (-want +got):\n%s", diff)
	}
	if got := e.Spec.TimeLimitDuration().String(); got != "4h0m0s" {
		t.Errorf("TimeLimitDuration = %s, want 4h0m0s", got)
	}
}

// TestExecutorDiagnostics checks that each bad value is reported once, at
// the value's line and column, with a message that says what to write.
func TestExecutorDiagnostics(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		body string // the executor body, on lines 2 onwards
		want string // "LINE:COL Summary" of the one error
	}{
		"time limit not a duration": {`time_limit = "4 hours"`, "2:14 Invalid time_limit"},
		"time limit seconds":        {`time_limit = "90s"`, "2:14 Invalid time_limit"},
		"time limit slurm minutes":  {`time_limit = "1:61:00"`, "2:14 Invalid time_limit"},
		"nodes zero":                {`nodes = 0`, "2:9 Invalid nodes"},
		"negative retries":          {`retries = -1`, "2:11 Invalid retries"},
		"partition with space":      {`partition = "gpu; rm"`, "2:13 Invalid partition"},
		"partition wrong type":      {`partition = ["a"]`, "2:13 Incorrect attribute value type"},
		"extra sbatch not option":   {`extra_sbatch = ["mem=0"]`, "2:16 Invalid extra_sbatch option"},
		"extra sbatch newline":      {`extra_sbatch = ["--mem=0\n#SBATCH --x"]`, "2:16 Invalid extra_sbatch option"},
		"extra sbatch not list":     {`extra_sbatch = "--mem=0"`, "2:16 Incorrect attribute value type"},
		"env bad name":              {`env = { "A-B" = "1" }`, "2:7 Invalid env name"},
		"container image spaces":    {`container_image = "a b"`, "2:19 Invalid container_image"},
		"unknown argument":          {`partitions = "gpu"`, "2:1 Unsupported argument"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, diags := loadString(t, fmt.Sprintf("executor \"slurm\" \"e\" {\n%s\n}\n", tc.body))
			if diff := cmp.Diff([]string{tc.want}, errorPositions(diags)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%s", diff, diags)
			}
		})
	}
}

func TestKubernetesExecutorDecodes(t *testing.T) {
	t.Parallel()
	cfg, diags := loadString(t, `
executor "kubernetes" "k" {
  context         = "prod"
  namespace       = "training"
  image           = "registry.example.com/gpuflow:1"
  service_account = "trainer"
  pending_timeout = "15m"
  node_selector   = { "nvidia.com/gpu.product" = "NVIDIA-H200" }
  annotations     = { "example.com/team" = "ml" }
  toleration {
    key      = "nvidia.com/gpu"
    operator = "Exists"
    effect   = "NoSchedule"
  }
  volume "work" {
    claim      = "gpuflow-work"
    mount_path = "/work"
  }
}
`)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := cfg.Executors["kubernetes.k"]
	want := ExecutorSpec{Context: ptr("prod"), Namespace: ptr("training"), Image: ptr("registry.example.com/gpuflow:1"),
		ServiceAccount: ptr("trainer"), PendingTimeout: ptr("15m"),
		NodeSelector: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H200"}, Annotations: map[string]string{"example.com/team": "ml"},
		Tolerations: []ExecutorToleration{{Key: ptr("nvidia.com/gpu"), Operator: ptr("Exists"), Effect: ptr("NoSchedule")}},
		Volumes:     []ExecutorVolume{{Name: "work", Claim: ptr("gpuflow-work"), MountPath: ptr("/work")}}}
	if diff := cmp.Diff(want, e.Spec, cmpopts.IgnoreFields(ExecutorVolume{}, "Range")); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

func TestKubernetesExecutorDiagnostics(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		body string // the executor body, on lines 3 onwards, after an image
		want string
	}{
		"slurm argument":       {`partition = "gpu"`, "3:13 Unsupported argument"},
		"pending timeout":      {`pending_timeout = "soon"`, "3:19 Invalid pending_timeout"},
		"operator":             {"toleration {\n  operator = \"Exist\"\n}", "3:1 Invalid toleration operator"},
		"volume without claim": {"volume \"w\" {\n  mount_path = \"/w\"\n}", "3:1 Invalid volume"},
		"volume relative":      {"volume \"w\" {\n  claim = \"c\"\n  mount_path = \"w\"\n}", "3:1 Invalid volume"},
		"selector not a map":   {`node_selector = "a=b"`, "3:17 Incorrect attribute value type"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, diags := loadString(t, fmt.Sprintf("executor \"kubernetes\" \"e\" {\nimage = \"i\"\n%s\n}\n", tc.body))
			if diff := cmp.Diff([]string{tc.want}, errorPositions(diags)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%s", diff, diags)
			}
		})
	}
	_, diags := loadString(t, "executor \"kubernetes\" \"e\" {}\n")
	if diff := cmp.Diff([]string{"1:1 Missing image"}, errorPositions(diags)); diff != "" {
		t.Errorf("no image (-want +got):\n%s", diff)
	}
	_, diags = loadString(t, "executor \"slurm\" \"e\" {\n  image = \"i\"\n}\n")
	if diff := cmp.Diff([]string{"2:11 Unsupported argument"}, errorPositions(diags)); diff != "" {
		t.Errorf("kubernetes argument in a slurm executor (-want +got):\n%s", diff)
	}
}

func TestExecutorReferenceDiagnostics(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		src  string
		want []string
	}{
		"unknown kind": {
			"executor \"slurn\" \"e\" {}\n",
			[]string{"1:10 Unsupported executor kind"}},
		"undeclared": {
			"executor \"slurm\" \"big\" {}\nstage \"exec\" \"x\" {\n  executor = executor.slurm.bgi\n}\n",
			[]string{"3:14 Reference to undeclared executor"}},
		"not a reference": {
			"stage \"exec\" \"x\" {\n  executor = \"local\"\n}\n",
			[]string{"2:14 Invalid executor reference"}},
		"wrong namespace": {
			"stage \"exec\" \"x\" {\n  executor = hardware.h\n}\n",
			[]string{"2:14 Invalid executor reference"}},
		"duplicate": {
			"executor \"slurm\" \"e\" {}\nexecutor \"slurm\" \"e\" {}\n",
			[]string{"2:1 Duplicate executor block"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, diags := loadString(t, tc.src)
			if diff := cmp.Diff(tc.want, errorPositions(diags)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%s", diff, diags)
			}
		})
	}
}

func errorPositions(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Subject != nil {
			out = append(out, fmt.Sprintf("%d:%d %s", d.Subject.Start.Line, d.Subject.Start.Column, d.Summary))
		} else if d.Severity == hcl.DiagError {
			out = append(out, "?:? "+d.Summary)
		}
	}
	return out
}
