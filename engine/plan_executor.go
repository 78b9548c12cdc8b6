package engine

import (
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/executor/kubernetes"
	"github.com/gpuflow/gpuflow/engine/executor/slurm"
)

// ExecutorPlan says where a stage runs when not on this machine, and the
// job script that will run it there. Stages without one run locally.
type ExecutorPlan struct {
	// Address is the executor block's, executor.KIND.NAME.
	Address     string `json:"address"`
	Kind        string `json:"kind"`
	Nodes       int    `json:"nodes"`
	GPUsPerNode int    `json:"gpus_per_node"`
	// TimeLimitS is zero for the partition's default.
	TimeLimitS float64 `json:"time_limit_s,omitempty"`
	// Retries is how often a preempted job, or one that lost a node, is
	// submitted again.
	Retries int `json:"retries"`
	// Script is the sbatch script apply submits, byte for byte.
	Script string `json:"script,omitempty"`
	// Manifest is the Kubernetes manifest apply submits, with the names
	// and directories of one run left as placeholders.
	Manifest string `json:"manifest,omitempty"`
	// Kubernetes is what a Kubernetes run is rendered from.
	Kubernetes *kubernetes.Job `json:"kubernetes,omitempty"`
}

// DefaultRetries is how often a job that was preempted or lost a node is
// submitted again when the executor does not say.
const DefaultRetries = 1

// planExecutor renders the job script of a stage that names an executor.
// The executor is not part of the stage's input hash: where a stage ran
// does not change what it produced.
func (p *planner) planExecutor(n *stageNode, sp *StagePlan) hcl.Diagnostics {
	ref := n.cfg.Executor
	if ref == nil {
		return nil
	}
	e := p.w.Config.Executors[ref.Kind+"."+ref.Name]
	if e == nil || !e.Decoded {
		return nil // the workload's loading reported it
	}
	if e.Kind == dsl.ExecutorKubernetes {
		return p.planKubernetes(e, ref, sp)
	}
	job, diags := slurmJob(e, ref, sp)
	if diags.HasErrors() {
		return diags
	}
	sp.Executor = &ExecutorPlan{Address: e.Addr(), Kind: e.Kind, Nodes: job.Nodes, GPUsPerNode: job.GPUsPerNode,
		TimeLimitS: job.TimeLimit.Seconds(), Retries: job.Retries, Script: slurm.Render(job)}
	return diags
}

// slurmJob is what a stage's script is rendered from: the executor's
// settings, and what the stage claims where the executor does not say.
func slurmJob(e *dsl.Executor, ref *dsl.ExecutorRef, sp *StagePlan) (slurm.Job, hcl.Diagnostics) {
	s := &e.Spec
	job := slurm.Job{Stage: sp.Address, Plugin: sp.Plugin.Name, Executor: e.Addr(),
		Partition: deref(s.Partition), Account: deref(s.Account), QoS: deref(s.QoS), TimeLimit: s.TimeLimitDuration(),
		Nodes: max(1, sp.Claims.Nodes), GPUsPerNode: sp.Claims.GPUsPerNode, CPUsPerTask: deref(s.CPUsPerTask),
		Exclusive: deref(s.Exclusive), ContainerImage: deref(s.ContainerImage), ExtraSbatch: s.ExtraSbatch,
		Retries: DefaultRetries}
	diags := fitExecutor(e, ref, sp, &job.Nodes, &job.GPUsPerNode)
	if s.Retries != nil {
		job.Retries = *s.Retries
	}
	for _, name := range sortedNames(s.Env) {
		job.Env = append(job.Env, slurm.EnvVar{Name: name, Value: s.Env[name]})
	}
	for _, st := range sp.NCCLEnv {
		job.NCCLEnv = append(job.NCCLEnv, slurm.EnvVar{Name: st.Name, Value: st.Value})
	}
	// A training stage launches torchrun on every node; a multi-node stage
	// of any kind may.
	job.Rendezvous = sp.Layout != nil || sp.AutoLayout != nil || job.Nodes > 1
	return job, diags
}

// fitExecutor takes the executor's nodes and gpus_per_node where it sets
// them, and reports those that do not fit the stage.
func fitExecutor(e *dsl.Executor, ref *dsl.ExecutorRef, sp *StagePlan, nodes, gpusPerNode *int) hcl.Diagnostics {
	s := &e.Spec
	var diags hcl.Diagnostics
	if s.Nodes != nil {
		if sp.Claims.Nodes > 0 && *s.Nodes != sp.Claims.Nodes {
			diags = diags.Append(executorMismatch(e, ref, "nodes", fmt.Sprintf(
				"%s asks for %d node(s), but stage %s runs on %d; leave nodes out to take the stage's, or change its hardware.",
				e.Addr(), *s.Nodes, sp.Address, sp.Claims.Nodes)))
		}
		*nodes = *s.Nodes
	}
	if s.GPUsPerNode != nil {
		if *s.GPUsPerNode < sp.Claims.GPUsPerNode {
			diags = diags.Append(executorMismatch(e, ref, "gpus_per_node", fmt.Sprintf(
				"%s asks for %d GPU(s) per node, but stage %s needs %d; leave gpus_per_node out to take the stage's.",
				e.Addr(), *s.GPUsPerNode, sp.Address, sp.Claims.GPUsPerNode)))
		}
		*gpusPerNode = *s.GPUsPerNode
	}
	return diags
}

// executorMismatch reports an executor argument that does not fit the
// stage, at the argument, and at the stage's reference when it is not
// written in the block.
func executorMismatch(e *dsl.Executor, ref *dsl.ExecutorRef, arg, detail string) *hcl.Diagnostic {
	subject := ref.Range
	if r, ok := e.Ranges[arg]; ok {
		subject = r
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Executor does not fit the stage", Detail: detail, Subject: &subject}
}

// job is what a Slurm run of sp needs to follow its job and explain how
// it ended.
func (x *ExecutorPlan) job(sp *StagePlan) slurm.Job {
	return slurm.Job{Stage: sp.Address, Plugin: sp.Plugin.Name, Executor: x.Address, Nodes: x.Nodes,
		GPUsPerNode: x.GPUsPerNode, TimeLimit: time.Duration(x.TimeLimitS * float64(time.Second)), Retries: x.Retries}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
