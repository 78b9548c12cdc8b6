package kubernetes

import (
	"context"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
