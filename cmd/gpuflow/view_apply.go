package main

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/engine"
)

// applyView shows an apply as it happens: a live display on a terminal,
// timestamped lines otherwise, or JSON lines with -json. The engine calls
// its ApplyObserver methods from several goroutines.
type applyView interface {
	engine.ApplyObserver
	// Plan shows the plan before the user is asked to approve it.
	Plan(plan *engine.Plan)
	// NoChanges says there is nothing to run.
	NoChanges(plan *engine.Plan)
	// Started: the stages are about to run.
	Started(plan *engine.Plan)
	// Finished shows the summary, the failed stages' diagnostics and the
	// workload's outputs.
	Finished(res *engine.ApplyResult, sources map[string][]byte)
	// Interrupted: the user pressed Ctrl-C.
	Interrupted()
	Diagnostics(diags hcl.Diagnostics, sources map[string][]byte)
	Error(err error)
	// Close ends the live display.
	Close()
}

func newApplyView(env *cliEnv, asJSON, colour bool) applyView {
	if asJSON {
		return newApplyJSON(env)
	}
	return newApplyHuman(env, colour, env.isTerminal)
}
