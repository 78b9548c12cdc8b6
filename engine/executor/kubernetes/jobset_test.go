package kubernetes

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// The JobSet tests run through the JobSet controller that
// scripts/k8s/cluster.sh starts beside the control plane, with the JobSet
// API its CRD serves and the admission webhooks it registers.

// requireJobSet skips the test when the test cluster does not serve the
// JobSet API, or fails it when GPUFLOW_REQUIRE_K8S=1.
func requireJobSet(t *testing.T, c *Cluster) {
	t.Helper()
	has, err := c.HasJobSet()
	if err == nil && has {
		return
	}
	msg := "the test cluster does not serve the JobSet API (%v); restart it with scripts/k8s/cluster.sh stop && scripts/k8s/cluster.sh start"
	if os.Getenv("GPUFLOW_REQUIRE_K8S") == "1" {
		t.Fatalf(msg, err)
	}
	t.Skipf(msg, err)
}

func testJobSet(t *testing.T, annotations map[string]string) (*Cluster, Target, Job) {
	t.Helper()
	c, target, ns := requireCluster(t)
	requireJobSet(t, c)
	job := testJob(ns, annotations)
	job.JobSet = true
	return c, target, job
}

// TestJobSetCompletes: the controller admits the JobSet, makes its Job and
// the headless Service for the rendezvous; the run follows the pods to
// the JobSet's Completed condition.
func TestJobSetCompletes(t *testing.T) {
	t.Parallel()
	c, target, job := testJobSet(t, nil)
	resp, ev, ref := run(t, c, target, job, fastOptions)
	if resp.Diagnostics.HasErrors() {
		t.Fatalf("diagnostics: %s\nevents:\n%s", summaries(resp.Diagnostics), ev)
	}
	for _, want := range []string{"submitted JobSet " + job.Namespace + "/" + ref.Name, "(node 0) is Running on kwok-gpu-", "(node 1) is Succeeded"} {
		if !ev.has(want) {
			t.Errorf("no event with %q:\n%s", want, ev)
		}
	}
	svc, err := c.Client.CoreV1().Services(job.Namespace).Get(context.Background(), ref.Name, metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != "None" {
		t.Errorf("the JobSet controller's headless Service %s: %v %+v", ref.Name, err, svc)
	}
}

// TestJobSetFails: a pod that exits with code 3 fails the JobSet (no
// restarts), and the stage with it.
func TestJobSetFails(t *testing.T) {
	t.Parallel()
	c, target, job := testJobSet(t, map[string]string{"gpuflow.test/exit-code": "3", "gpuflow.test/reason": "Error",
		"pod-complete.stage.kwok.x-k8s.io/weight": "0"})
	resp, ev, _ := run(t, c, target, job, fastOptions)
	got := summaries(resp.Diagnostics)
	for _, w := range []string{"failed with exit code 3", "exited with code 3 (Error)"} {
		if !strings.Contains(got, w) {
			t.Errorf("diagnostics lack %q:\n%s\nevents:\n%s", w, got, ev)
		}
	}
}

// TestJobSetCancel: stopping the stage deletes the JobSet, and with it
// its Job and pods.
func TestJobSetCancel(t *testing.T) {
	t.Parallel()
	c, target, job := testJobSet(t, map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": "120000"})
	r := NewRun(job, target, fastOptions)
	ev := &events{}
	done := make(chan *api.ApplyResponse)
	go func() {
		resp, _ := r.Provider().ApplyStage(context.Background(), applyRequest(t), ev)
		done <- resp
	}()
	waitFor(t, ev, "(node 1) is Running")
	if err := r.Provider().Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp := <-done
	if got := summaries(resp.Diagnostics); !strings.Contains(got, "deleted") || !strings.Contains(got, "stopped") {
		t.Errorf("diagnostics: %s", got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pods, err := c.Client.CoreV1().Pods(job.Namespace).List(context.Background(), metav1.ListOptions{})
		if err == nil && len(pods.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pods left after the cancel: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
