package engine

import (
	"context"
	"fmt"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/executor/slurm"
)

// launcher is what starts a run of sp: its executor's, or a local plugin
// process for a stage without one.
func (a *applier) launcher(sp *StagePlan) Launcher {
	if sp.Executor == nil {
		return a.opts.Launcher
	}
	return executorLauncher{sp: sp, slurm: a.opts.Slurm}
}

// executorLauncher runs a stage through its executor. For the engine the
// job stands where a plugin process would: ApplyStage submits and follows
// it, Stop and Kill cancel it.
type executorLauncher struct {
	sp    *StagePlan
	slurm slurm.Options
}

func (l executorLauncher) Launch(_ context.Context, p *Plugin) (PluginProcess, error) {
	x := l.sp.Executor
	if x.Kind != dsl.ExecutorSlurm {
		return nil, fmt.Errorf("the plan names executor kind %q, which this gpuflow does not know", x.Kind)
	}
	return slurm.NewRun(x.job(l.sp), x.Script, l.slurm), nil
}
