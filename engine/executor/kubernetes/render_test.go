package kubernetes

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// renderCases are manifests whose every line a reviewer can check in
// testdata/NAME.yaml.
var renderCases = map[string]Job{
	"minimal": {Stage: "exec.hello", Plugin: "exec", Executor: "executor.kubernetes.test", Namespace: "default",
		Image: "registry.example.com/gpuflow:1", Nodes: 1},
	"full": {Stage: "pretrain.llama", Plugin: "train", Executor: "executor.kubernetes.big", Namespace: "training",
		Image: "registry.example.com/gpuflow:1", ServiceAccount: "trainer", Nodes: 2, GPUsPerNode: 8,
		NodeSelector: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H200"},
		Tolerations:  []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}},
		Volumes: []Volume{{Name: "work", MountPath: "/work", Claim: "gpuflow-work"},
			{Name: "data", MountPath: "/data", HostPath: "/mnt/data", ReadOnly: true}},
		Annotations: map[string]string{"example.com/team": "ml"}, TimeLimitS: 4 * 3600,
		Env:        []EnvVar{{"OMP_NUM_THREADS", "8"}},
		NCCLEnv:    []EnvVar{{"NCCL_NVLS_ENABLE", "0"}, {"NCCL_SOCKET_IFNAME", "^lo,docker"}},
		Rendezvous: true},
}

func TestManifestGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]Job{}
	for name, job := range renderCases {
		cases[name] = job
		job.JobSet = true
		cases[name+"-jobset"] = job
	}
	for name, job := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := Manifest(job, PlanSubmission(job))
			path := filepath.Join("testdata", name+".yaml")
			if *update {
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
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}

func TestBaseName(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"pretrain.llama": "gpuflow-pretrain-llama",
		"data_prep.Fine": "gpuflow-data-prep-fine",
		"exec.a_very_long_stage_name_that_goes_on": "gpuflow-exec-a-very-long-stage-name-that",
	}
	for stage, want := range tests {
		if got := BaseName(stage); got != want {
			t.Errorf("BaseName(%q) = %q, want %q", stage, got, want)
		}
	}
}

func TestArgumentFor(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"spec.template.spec.containers[0].image":                            "image",
		"spec.template.spec.serviceAccountName":                             "service_account",
		"spec.replicatedJobs[0].template.spec.template.spec.nodeSelector":   "node_selector",
		"spec.template.spec.containers[0].volumeMounts[0].mountPath":        "volume",
		"spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]": "gpus_per_node",
		"spec.template.metadata.annotations":                                "annotations",
		"metadata.name":                                                     "",
	}
	for field, want := range tests {
		if got := argumentFor(field); got != want {
			t.Errorf("argumentFor(%q) = %q, want %q", field, got, want)
		}
	}
}
