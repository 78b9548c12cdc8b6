package kubernetes

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// These tests run Jobs through a real API server, controller manager and
// scheduler, the ones scripts/k8s/cluster.sh starts on this machine (CI
// runs it first), with kwok's two fake GPU nodes taking the pods through
// their phases. No container runs there, so each test plays the node
// hosts itself where it needs their results: it writes them into the run
// directory once the pods run, as `gpuflow node-host` does in a pod.

// testKubeconfig is the cluster's kubeconfig: $GPUFLOW_K8S_KUBECONFIG, or
// the one cluster.sh writes in this repository's .k8s folder.
func testKubeconfig() string {
	if p := os.Getenv("GPUFLOW_K8S_KUBECONFIG"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", ".k8s", "cluster", "kubeconfig")
}

// requireCluster skips the test when the test cluster does not answer,
// or fails it when GPUFLOW_REQUIRE_K8S=1 (CI, which always starts one). It
// returns a connection and a fresh namespace, deleted after the test.
func requireCluster(t *testing.T) (*Cluster, Target, string) {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("GPUFLOW_REQUIRE_K8S") == "1" {
		fail = t.Fatalf
	}
	target := Target{Kubeconfig: testKubeconfig()}
	if _, err := os.Stat(target.Kubeconfig); err != nil {
		fail("no test cluster (%s); run scripts/k8s/cluster.sh start", err)
	}
	c, err := Connect(target)
	if err != nil {
		fail("the test cluster's kubeconfig: %s", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil || len(nodes.Items) == 0 {
		fail("the test cluster has no kwok node (%v); run scripts/k8s/cluster.sh start", err)
	}
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "gpuflow-test-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return c, target, ns.Name
}

// testJob is a two-node stage on the kwok nodes, which carry the taint
// NVIDIA's GPU operator puts on GPU nodes.
func testJob(ns string, annotations map[string]string) Job {
	return Job{Stage: "exec.k8s", Plugin: "exec", Executor: "executor.kubernetes.test", Namespace: ns,
		Image: "registry.example.com/gpuflow:test", Nodes: 2, GPUsPerNode: 8, Rendezvous: true,
		Tolerations:     []Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}},
		NodeSelector:    map[string]string{"type": "kwok"},
		Annotations:     annotations,
		NCCLEnv:         []EnvVar{{Name: "NCCL_NVLS_ENABLE", Value: "0"}},
		PendingTimeoutS: 60,
		Positions:       map[string]string{"service_account": "main.hcl:7:21"},
	}
}

// events collects what a run sends, as "level: message" for logs.
type events struct {
	mu   sync.Mutex
	logs []string
}

func (e *events) Send(ev api.Event) {
	if ev.Log == nil {
		return
	}
	e.mu.Lock()
	e.logs = append(e.logs, ev.Log.Level+": "+ev.Log.Message)
	e.mu.Unlock()
}

func (e *events) has(sub string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.logs {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.logs, "\n")
}

var fastOptions = Options{Poll: 200 * time.Millisecond, Tail: 50 * time.Millisecond, DeleteWait: 30 * time.Second}

func applyRequest(t *testing.T) *api.ApplyRequest {
	return &api.ApplyRequest{StageRequest: api.StageRequest{Type: "exec", Name: "k8s", WorkDir: t.TempDir()}, RunDir: t.TempDir()}
}

// playNodeHosts writes each node's result into the run directory once the
// run's pods are running, as the node hosts in real pods do.
func playNodeHosts(t *testing.T, c *Cluster, refs <-chan Ref, nodes int) {
	go func() {
		ref, ok := <-refs
		if !ok {
			return
		}
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			pods, err := c.Client.CoreV1().Pods(ref.Namespace).List(context.Background(), metav1.ListOptions{LabelSelector: LabelRun + "=" + ref.Name})
			if err == nil && len(pods.Items) == nodes && allRunning(pods.Items) {
				for n := range nodes {
					dir := rundir.NodeDir(rundir.JobDir(ref.RunDir, ref.Name), n)
					_ = os.MkdirAll(dir, 0o755)
					_ = rundir.WriteResult(dir, &rundir.Result{Node: n, Host: "kwok", Outputs: map[string]cty.Value{"node": cty.NumberIntVal(int64(n))}})
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

func allRunning(pods []corev1.Pod) bool {
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodSucceeded {
			return false
		}
	}
	return true
}

func summaries(d api.Diagnostics) string {
	var s []string
	for _, x := range d {
		s = append(s, x.Summary+": "+x.Detail)
	}
	return strings.Join(s, "\n")
}
