package kubernetes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// run applies job through the test cluster, playing its node hosts, and
// returns the response, the events and the Job it submitted.
func run(t *testing.T, c *Cluster, target Target, job Job, opts Options) (*api.ApplyResponse, *events, Ref) {
	t.Helper()
	refs := make(chan Ref, 1)
	var ref Ref
	opts.Submitted = func(r Ref) { ref = r; refs <- r }
	playNodeHosts(t, c, refs, job.Nodes)
	ev := &events{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := NewRun(job, target, opts).Provider().ApplyStage(ctx, applyRequest(t), ev)
	close(refs)
	if err != nil {
		t.Fatalf("ApplyStage: %v\nevents:\n%s", err, ev)
	}
	return resp, ev, ref
}

func TestJobCompletes(t *testing.T) {
	t.Parallel()
	c, target, ns := requireCluster(t)
	marker := "container log line " + ns
	appendContainerLog(t, marker)
	resp, ev, ref := run(t, c, target, testJob(ns, nil), fastOptions)
	if resp.Diagnostics.HasErrors() {
		t.Fatalf("diagnostics: %s\nevents:\n%s", summaries(resp.Diagnostics), ev)
	}
	if diff := cmp.Diff(cty.NumberIntVal(0), resp.Outputs["node"], cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) })); diff != "" {
		t.Errorf("outputs are node 0's (-want +got):\n%s", diff)
	}
	for _, want := range []string{"submitted Job " + ns + "/" + ref.Name, "(node 0) is Running on kwok-gpu-", "(node 1) is Succeeded", marker} {
		if !ev.has(want) {
			t.Errorf("no event with %q:\n%s", want, ev)
		}
	}
	svc, err := c.Client.CoreV1().Services(ns).Get(context.Background(), ref.Name, metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != "None" {
		t.Errorf("headless Service %s: %v %+v", ref.Name, err, svc)
	}
}

// appendContainerLog adds a line to the file the kwok nodes serve as
// every container's log.
func appendContainerLog(t *testing.T, line string) {
	t.Helper()
	path := filepath.Join(filepath.Dir(testKubeconfig()), "container.log")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("the kwok container log: %v", err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// TestJobFails: pods that exit with an error code, or are killed for
// memory, fail the stage with a diagnostic naming the pod, the code and
// what to do; a JobSet's pod fails it the same way (no restarts).
func TestJobFails(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		exitCode, reason string
		jobSet           bool
		want             []string
	}{
		"exit code 3":         {"3", "Error", false, []string{"failed with exit code 3", "exited with code 3 (Error)", "BackoffLimitExceeded", "kubectl logs -n"}},
		"oom killed":          {"137", "OOMKilled", false, []string{"ran out of memory", "OOMKilled, exit code 137", "LimitRange"}},
		"JobSet, exit code 3": {"3", "Error", true, []string{"failed with exit code 3", "exited with code 3 (Error)"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, target, ns := requireCluster(t)
			job := testJob(ns, map[string]string{"gpuflow.test/exit-code": tc.exitCode, "gpuflow.test/reason": tc.reason,
				"pod-complete.stage.kwok.x-k8s.io/weight": "0"})
			if tc.jobSet {
				requireJobSet(t, c)
				job.JobSet = true
			}
			resp, ev, _ := run(t, c, target, job, fastOptions)
			got := summaries(resp.Diagnostics)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("diagnostics lack %q:\n%s\nevents:\n%s", w, got, ev)
				}
			}
		})
	}
}

// TestUnschedulable: a pod asking for more GPUs than any node has fails
// the stage after the pending timeout with the scheduler's message, and
// its Job is deleted.
func TestUnschedulable(t *testing.T) {
	t.Parallel()
	c, target, ns := requireCluster(t)
	job := testJob(ns, nil)
	job.GPUsPerNode, job.PendingTimeoutS = 16, 2
	resp, ev, ref := run(t, c, target, job, fastOptions)
	got := summaries(resp.Diagnostics)
	for _, w := range []string{"No node can run Kubernetes Job", "Insufficient nvidia.com/gpu", "pending_timeout"} {
		if !strings.Contains(got, w) {
			t.Errorf("diagnostics lack %q:\n%s", w, got)
		}
	}
	if !ev.has("unschedulable") {
		t.Errorf("no event says the pod is unschedulable:\n%s", ev)
	}
	waitGone(t, c, ref)
}

func waitGone(t *testing.T, c *Cluster, ref Ref) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := c.Client.BatchV1().Jobs(ref.Namespace).Get(context.Background(), ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Job %s still there: %v", ref.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCancel: stopping the stage deletes its Job (or JobSet), pods first.
func TestCancel(t *testing.T) {
	t.Parallel()
	for name, jobSet := range map[string]bool{"Job": false, "JobSet": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, target, ns := requireCluster(t)
			job := testJob(ns, map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": "120000"})
			if jobSet {
				requireJobSet(t, c)
				job.JobSet = true
			}
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
			if jobSet {
				waitNoPods(t, c, ns)
				return
			}
			pods, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil || len(pods.Items) != 0 {
				t.Errorf("pods left after the cancel: %v %d", err, len(pods.Items))
			}
		})
	}
}

// waitNoPods waits until the namespace has no pod left: a JobSet's
// foreground deletion may end before its Job's pods are gone.
func waitNoPods(t *testing.T, c *Cluster, ns string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pods, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err == nil && len(pods.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pods left after the cancel: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitFor(t *testing.T, ev *events, sub string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ev.has(sub) {
		if time.Now().After(deadline) {
			t.Fatalf("no event with %q:\n%s", sub, ev)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestResume: a run given the Job an earlier, killed gpuflow submitted
// follows it to its end and submits nothing.
func TestResume(t *testing.T) {
	t.Parallel()
	c, target, ns := requireCluster(t)
	job := testJob(ns, map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": "6000"})
	opts := fastOptions
	refs := make(chan Ref, 1)
	opts.Submitted = func(r Ref) { refs <- r }
	first := NewRun(job, target, opts)
	ctx, kill := context.WithCancel(context.Background())
	ev := &events{}
	go func() { _, _ = first.Provider().ApplyStage(ctx, applyRequest(t), ev) }()
	ref := <-refs
	waitFor(t, ev, "(node 0) is Running")
	kill() // gpuflow dies: its context ends, and nothing deletes the Job

	resumed := fastOptions
	resumed.Resume = &ref
	resumed.Submitted = func(r Ref) { t.Errorf("submitted %s again", r.Name) }
	refs2 := make(chan Ref, 1)
	refs2 <- ref
	playNodeHosts(t, c, refs2, job.Nodes)
	ev2 := &events{}
	ctx2, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := NewRun(job, target, resumed).Provider().ApplyStage(ctx2, applyRequest(t), ev2)
	if err != nil || resp.Diagnostics.HasErrors() {
		t.Fatalf("resumed run: %v %s\nevents:\n%s", err, summaries(resp.Diagnostics), ev2)
	}
	if !ev2.has("following Job " + ns + "/" + ref.Name) {
		t.Errorf("no event says the Job is followed:\n%s", ev2)
	}
	jobs, err := c.Client.BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(jobs.Items) != 1 {
		t.Errorf("Jobs in the namespace: %v, %d; want the one", err, len(jobs.Items))
	}
}

// TestRejected: a manifest the API server refuses is reported with the
// API's field path and the executor argument it comes from.
func TestRejected(t *testing.T) {
	t.Parallel()
	c, target, ns := requireCluster(t)
	job := testJob(ns, nil)
	job.ServiceAccount = "Not_A_Name"
	resp, _, _ := run(t, c, target, job, fastOptions)
	got := summaries(resp.Diagnostics)
	for _, w := range []string{"Kubernetes refused the Job", "spec.template.spec.serviceAccountName", "service_account at main.hcl:7:21 in executor.kubernetes.test"} {
		if !strings.Contains(got, w) {
			t.Errorf("diagnostics lack %q:\n%s", w, got)
		}
	}
}
