package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/engine/state"
)

// This test applies a workload through the Kubernetes control plane that
// scripts/k8s/cluster.sh starts on this machine (CI runs it first); the
// executor's own tests (engine/executor/kubernetes) cover the rest.

// requireKubernetes returns the test cluster's kubeconfig; it skips the
// test when there is none, or fails it when GPUFLOW_REQUIRE_K8S=1.
func requireKubernetes(t *testing.T) string {
	t.Helper()
	path := os.Getenv("GPUFLOW_K8S_KUBECONFIG")
	if path == "" {
		_, file, _, _ := runtime.Caller(0)
		path = filepath.Join(filepath.Dir(file), "..", "..", ".k8s", "cluster", "kubeconfig")
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("GPUFLOW_REQUIRE_K8S") == "1" {
			t.Fatalf("no test cluster (%v); run scripts/k8s/cluster.sh start", err)
		}
		t.Skipf("no test cluster (%v); run scripts/k8s/cluster.sh start", err)
	}
	return path
}

// TestKubernetesApplyKilledThenFollowed kills gpuflow with SIGKILL while
// its stage's JobSet runs (the test cluster serves the JobSet API, so the
// plan chose one): state keeps it, and the next apply follows it to its
// end instead of submitting another.
func TestKubernetesApplyKilledThenFollowed(t *testing.T) {
	t.Parallel()
	kubeconfig := requireKubernetes(t)
	bin, err := gpuflowBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeWorkload(t, dir, `
executor "kubernetes" "kwok" {
  kubeconfig    = "`+kubeconfig+`"
  image         = "registry.example.com/gpuflow:test"
  nodes         = 2
  node_selector = { type = "kwok" }
  annotations   = { "pod-complete.stage.kwok.x-k8s.io/delay" = "8000" }

  toleration {
    key      = "nvidia.com/gpu"
    operator = "Exists"
  }
}

stage "exec" "job" {
  executor = executor.kubernetes.kwok
  command  = ["true"]
}
`)
	statePath := filepath.Join(dir, ".gpuflow", "state", "workload.json")
	first := gpuflowCmd(dir, bin, "apply", "-auto-approve", ".")
	var firstOut syncBuffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	job := waitForClusterJob(t, statePath, "exec.job")
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	if job.Kind != "JobSet" {
		t.Errorf("state recorded a %s; the test cluster serves the JobSet API, so the plan should choose a JobSet", job.Kind)
	}
	playNodeHosts(t, job, 2)

	out, err := gpuflowCmd(dir, bin, "apply", "-auto-approve", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("second apply: %v\n%s\nfirst apply said:\n%s", err, out, firstOut.String())
	}
	wantOutput(t, string(out), "following "+job.Kind+" "+job.Namespace+"/"+job.Name+", submitted by an earlier gpuflow apply",
		`stage\.exec\.job succeeded`)
	if strings.Contains(string(out), "submitted "+job.Kind) {
		t.Errorf("the second apply submitted a %s:\n%s", job.Kind, out)
	}
}

// waitForClusterJob polls state until the stage records its Job.
func waitForClusterJob(t *testing.T, path, stage string) *state.ClusterJob {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if st, err := state.Read(path); err == nil && st.Stages[stage] != nil && st.Stages[stage].ClusterJob != nil {
			return st.Stages[stage].ClusterJob
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("state never recorded a Job for %s", stage)
	return nil
}

// playNodeHosts writes each node's result into the Job's run directory,
// as gpuflow node-host in a real pod does; kwok runs no container.
func playNodeHosts(t *testing.T, job *state.ClusterJob, nodes int) {
	t.Helper()
	for n := range nodes {
		dir := rundir.NodeDir(rundir.JobDir(job.RunDir, job.Name), n)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := rundir.WriteResult(dir, &rundir.Result{Node: n, Host: "kwok"}); err != nil {
			t.Fatal(err)
		}
	}
}
