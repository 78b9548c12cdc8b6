package engine

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/executor/kubernetes"
)

// ClusterProbe asks a Kubernetes cluster what the plan needs to know of
// it: whether it serves the JobSet API.
type ClusterProbe interface {
	HasJobSet(t kubernetes.Target) (bool, error)
}

// planKubernetes renders the manifest of a stage whose executor is a
// kubernetes one.
func (p *planner) planKubernetes(e *dsl.Executor, ref *dsl.ExecutorRef, sp *StagePlan) hcl.Diagnostics {
	job, diags := kubernetesJob(e, ref, sp)
	if diags.HasErrors() {
		return diags
	}
	diags = append(diags, p.probeJobSet(e, &job)...)
	sp.Executor = &ExecutorPlan{Address: e.Addr(), Kind: e.Kind, Nodes: job.Nodes, GPUsPerNode: job.GPUsPerNode,
		TimeLimitS: job.TimeLimitS, Manifest: kubernetes.Manifest(job, kubernetes.PlanSubmission(job)), Kubernetes: &job}
	return diags
}

// probeJobSet asks the cluster whether it serves JobSet; one that cannot
// be asked gets an Indexed Job, and the plan says why.
func (p *planner) probeJobSet(e *dsl.Executor, job *kubernetes.Job) hcl.Diagnostics {
	if p.opts.Clusters == nil {
		return nil
	}
	has, err := p.opts.Clusters.HasJobSet(job.Target)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Kubernetes cluster not asked about JobSet",
			Detail: fmt.Sprintf("gpuflow could not ask the cluster of %s whether it serves the JobSet API (%s); the plan renders an Indexed Job and a headless Service, which every cluster runs.",
				e.Addr(), err),
			Subject: e.DeclRange.Ptr()}}
	}
	job.JobSet = has
	return nil
}

// kubernetesJob is what a stage's manifest is rendered from: the
// executor's settings, and what the stage claims where the executor does
// not say.
func kubernetesJob(e *dsl.Executor, ref *dsl.ExecutorRef, sp *StagePlan) (kubernetes.Job, hcl.Diagnostics) {
	s := &e.Spec
	job := kubernetes.Job{Stage: sp.Address, Plugin: sp.Plugin.Name, Executor: e.Addr(),
		Target:    kubernetes.Target{Kubeconfig: deref(s.Kubeconfig), Context: deref(s.Context)},
		Namespace: deref(s.Namespace), Image: deref(s.Image), ServiceAccount: deref(s.ServiceAccount),
		Nodes: max(1, sp.Claims.Nodes), GPUsPerNode: sp.Claims.GPUsPerNode, NodeSelector: s.NodeSelector,
		Annotations: s.Annotations, TimeLimitS: s.TimeLimitDuration().Seconds(),
		PendingTimeoutS: kubernetes.DefaultPendingTimeout.Seconds(), Positions: map[string]string{}}
	if s.PendingTimeout != nil {
		job.PendingTimeoutS = s.PendingTimeoutDuration().Seconds()
	}
	diags := fitExecutor(e, ref, sp, &job.Nodes, &job.GPUsPerNode)
	if job.Namespace == "" {
		ns, err := job.Target.Namespace()
		if err != nil {
			ns = "default"
		}
		job.Namespace = ns
	}
	for _, t := range s.Tolerations {
		job.Tolerations = append(job.Tolerations, kubernetes.Toleration{Key: deref(t.Key), Operator: deref(t.Operator),
			Value: deref(t.Value), Effect: deref(t.Effect)})
	}
	for _, v := range s.Volumes {
		job.Volumes = append(job.Volumes, kubernetes.Volume{Name: v.Name, MountPath: deref(v.MountPath), Claim: deref(v.Claim),
			HostPath: deref(v.HostPath), ReadOnly: deref(v.ReadOnly)})
	}
	for _, name := range sortedNames(s.Env) {
		job.Env = append(job.Env, kubernetes.EnvVar{Name: name, Value: s.Env[name]})
	}
	for _, st := range sp.NCCLEnv {
		job.NCCLEnv = append(job.NCCLEnv, kubernetes.EnvVar{Name: st.Name, Value: st.Value})
	}
	for _, arg := range sortedRanges(e.Ranges) {
		r := e.Ranges[arg]
		job.Positions[arg] = fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
	}
	job.Rendezvous = sp.Layout != nil || sp.AutoLayout != nil || job.Nodes > 1
	return job, diags
}

func sortedRanges(m map[string]hcl.Range) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
