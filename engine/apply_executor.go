package engine

import (
	"context"
	"fmt"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/executor/kubernetes"
	"github.com/gpuflow/gpuflow/engine/executor/slurm"
	"github.com/gpuflow/gpuflow/engine/state"
)

// launcher is what starts a run of sp: its executor's, or a local plugin
// process for a stage without one. rec is the stage's record in state.
func (a *applier) launcher(sp *StagePlan, rec *state.Stage) Launcher {
	if sp.Executor == nil {
		return a.opts.Launcher
	}
	return executorLauncher{sp: sp, slurm: a.opts.Slurm, kubernetes: a.kubernetesOptions(sp, rec)}
}

// executorLauncher runs a stage through its executor. For the engine the
// job stands where a plugin process would: ApplyStage submits and follows
// it, Stop and Kill cancel it.
type executorLauncher struct {
	sp         *StagePlan
	slurm      slurm.Options
	kubernetes kubernetes.Options
}

func (l executorLauncher) Launch(_ context.Context, p *Plugin) (PluginProcess, error) {
	x := l.sp.Executor
	switch {
	case x.Kind == dsl.ExecutorSlurm:
		return slurm.NewRun(x.job(l.sp), x.Script, l.slurm), nil
	case x.Kind == dsl.ExecutorKubernetes && x.Kubernetes != nil:
		return kubernetes.NewRun(*x.Kubernetes, x.Kubernetes.Target, l.kubernetes), nil
	}
	return nil, fmt.Errorf("the plan names executor kind %q, which this gpuflow does not know", x.Kind)
}

// kubernetesOptions records each Job the cluster accepts in the stage's
// state, and resumes the Job an earlier apply recorded for the same
// inputs when that apply did not see it end (it was killed).
func (a *applier) kubernetesOptions(sp *StagePlan, rec *state.Stage) kubernetes.Options {
	opts := a.opts.Kubernetes
	if prior := a.priorRecord(sp.Address); prior != nil && prior.Status == state.StatusRunning &&
		prior.ClusterJob != nil && prior.InputHash == rec.InputHash {
		j := prior.ClusterJob
		opts.Resume = &kubernetes.Ref{Kind: j.Kind, Namespace: j.Namespace, Name: j.Name, UID: j.UID, RunDir: j.RunDir}
		rec.ClusterJob = j
	}
	opts.Submitted = func(ref kubernetes.Ref) {
		rec.ClusterJob = &state.ClusterJob{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID, RunDir: ref.RunDir}
		_ = a.record(rec) // a failure to record shows when the stage's end is recorded
	}
	return opts
}

func (a *applier) priorRecord(addr string) *state.Stage {
	if a.prior == nil {
		return nil
	}
	return a.prior.Stages[addr]
}
