package kubernetes

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// How a Job ended, as gpuflow tells them apart.
const (
	StateCompleted = "Completed"
	StateFailed    = "Failed"
	// StateDeleted: the Job is gone, deleted by gpuflow (CancelledByUs)
	// or by someone else.
	StateDeleted = "Deleted"
	// StateUnschedulable: no node took a pod within the pending timeout;
	// gpuflow deleted the Job.
	StateUnschedulable = "Unschedulable"
	// StateImage: a pod's image cannot be pulled, or its container made;
	// gpuflow deleted the Job.
	StateImage = "ImageError"
)

// Outcome is how a Job ended.
type Outcome struct {
	Ref   Ref
	State string
	// Reason and Message are the Job's failure condition's, or the pod's
	// that explains the end best.
	Reason  string
	Message string
	// Pod, Node (its index) and NodeName name the pod that explains the
	// end, when one does.
	Pod      string
	Node     int
	NodeName string
	// ExitCode and ContainerReason are how that pod's container ended:
	// 3 and "Error", 137 and "OOMKilled".
	ExitCode        int32
	ContainerReason string
	// Waited is how long the unschedulable pod waited.
	Waited        time.Duration
	CancelledByUs bool
}

// response turns how the Job ended, and what its nodes reported, into the
// stage's result. The stage succeeds only when the Job completed and every
// node's plugin succeeded; its outputs are the first node's.
func (r *Run) response(o Outcome, results []*rundir.Result, ref Ref) *api.ApplyResponse {
	nodeDiags, missing := nodeDiagnostics(results)
	if o.State == StateCompleted && len(missing) == 0 && !nodeDiags.HasErrors() {
		return &api.ApplyResponse{Outputs: results[0].Outputs, Diagnostics: nodeDiags}
	}
	d := o.Diagnostic(r.job)
	if o.State == StateCompleted && len(missing) > 0 {
		d.Detail += fmt.Sprintf(" Node(s) %s wrote no result in %s; the run directory must be on a volume every pod mounts at the same path (volume blocks in %s), and the image must hold gpuflow.",
			joinInts(missing), rundir.JobDir(ref.RunDir, ref.Name), r.job.Executor)
	}
	if tail := r.StderrTail(); len(tail) > 0 && o.State != StateCompleted {
		d.Detail += "\nThe last lines of the container log:\n  " + strings.Join(tail, "\n  ")
	}
	if o.State == StateFailed && nodeDiags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: append(nodeDiags, d)}
	}
	return &api.ApplyResponse{Diagnostics: append(api.Diagnostics{d}, nodeDiags...)}
}

// nodeDiagnostics gathers the plugins' diagnostics from every node, and
// lists the nodes that wrote no result.
func nodeDiagnostics(results []*rundir.Result) (api.Diagnostics, []int) {
	var diags api.Diagnostics
	var missing []int
	for n, res := range results {
		if res == nil {
			missing = append(missing, n)
			continue
		}
		if res.Error != "" {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Node host failed",
				Detail: fmt.Sprintf("The node host on node %d (%s) could not run the stage: %s.", n, res.Host, res.Error)})
		}
		for _, d := range res.Diagnostics {
			if len(results) > 1 {
				d.Detail = fmt.Sprintf("On node %d (%s): %s", n, res.Host, d.Detail)
			}
			diags = append(diags, d)
		}
	}
	return diags, missing
}

// Diagnostic explains an outcome other than success, saying what to do.
func (o Outcome) Diagnostic(j Job) api.Diagnostic {
	summary, detail := o.explain(j)
	return api.Diagnostic{Severity: api.Error, Summary: summary, Detail: detail}
}

func (o Outcome) explain(j Job) (summary, detail string) {
	name, kind := o.Ref.Namespace+"/"+o.Ref.Name, o.Ref.Kind
	switch {
	case o.State == StateDeleted && o.CancelledByUs:
		return fmt.Sprintf("Kubernetes %s %s deleted", kind, o.Ref.Name), fmt.Sprintf(
			"gpuflow deleted %s %s (foreground propagation, so its pods went first) because the stage was stopped.", kind, name)
	case o.State == StateDeleted:
		return fmt.Sprintf("Kubernetes %s %s was deleted", kind, o.Ref.Name), fmt.Sprintf(
			"%s %s was deleted outside gpuflow (kubectl delete, or its TTL) before it ended. Apply again to run the stage again.", kind, name)
	case o.State == StateUnschedulable:
		return fmt.Sprintf("No node can run Kubernetes %s %s", kind, o.Ref.Name), fmt.Sprintf(
			"Pod %s waited %s for a node; the scheduler says: %s gpuflow deleted %s %s. Ask for fewer GPUs per node (the stage's hardware), or fix node_selector and tolerations in %s; pending_timeout there says how long to wait (for an autoscaler, say).",
			o.Pod, o.Waited.Round(time.Second), ensureStop(o.Message), kind, name, j.Executor)
	case o.State == StateImage:
		return fmt.Sprintf("Kubernetes could not start the container of pod %s", o.Pod), fmt.Sprintf(
			"The container of pod %s (node %d) cannot start: %s: %s gpuflow deleted %s %s. Check image = %q in %s: it must exist, hold gpuflow, and be pullable with the service account's imagePullSecrets.",
			o.Pod, o.Node, o.Reason, ensureStop(o.Message), kind, name, j.Image, j.Executor)
	case o.State == StateFailed && o.ContainerReason == "OOMKilled":
		return fmt.Sprintf("Pod %s ran out of memory", o.Pod), fmt.Sprintf(
			"The container of pod %s (node %d, on %s) was killed for using more memory than it may (OOMKilled, exit code %d), so %s %s failed. Raise the memory limit the namespace's LimitRange sets, or make the stage use less.",
			o.Pod, o.Node, o.NodeName, o.ExitCode, kind, name)
	case o.State == StateFailed && o.Reason == "DeadlineExceeded":
		return fmt.Sprintf("Kubernetes %s %s reached its time limit", kind, o.Ref.Name), fmt.Sprintf(
			"%s %s ran longer than time_limit (%s) in %s and Kubernetes stopped it (DeadlineExceeded). Raise time_limit, or give the stage less to do.",
			kind, name, j.TimeLimit(), j.Executor)
	case o.State == StateFailed && o.Pod != "":
		return fmt.Sprintf("Pod %s failed with exit code %d", o.Pod, o.ExitCode), fmt.Sprintf(
			"The container of pod %s (node %d, on %s) exited with code %d (%s), so %s %s failed (%s). The stage's log holds its output; `kubectl logs -n %s %s` shows it while the pod is kept.",
			o.Pod, o.Node, o.NodeName, o.ExitCode, o.ContainerReason, kind, name, o.Reason, o.Ref.Namespace, o.Pod)
	case o.State == StateFailed:
		return fmt.Sprintf("Kubernetes %s %s failed", kind, o.Ref.Name), fmt.Sprintf(
			"%s %s failed (%s): %s `kubectl describe %s -n %s %s` says more.", kind, name, o.Reason, ensureStop(o.Message), kubectlKind(kind), o.Ref.Namespace, o.Ref.Name)
	case o.State == StateCompleted:
		return fmt.Sprintf("Kubernetes %s %s completed without a result", kind, o.Ref.Name), fmt.Sprintf(
			"%s %s completed, but not every node host reported how the stage went.", kind, name)
	}
	return fmt.Sprintf("Kubernetes %s %s ended in state %s", kind, o.Ref.Name, o.State), fmt.Sprintf(
		"%s %s ended in state %s; `kubectl describe %s -n %s %s` says more.", kind, name, o.State, kubectlKind(kind), o.Ref.Namespace, o.Ref.Name)
}

func ensureStop(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
