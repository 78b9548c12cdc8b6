package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/engine/state"
)

// planRequest is what a verb asks of an operation: the workload, its
// inputs, the state to plan against and what the user asked for.
type planRequest struct {
	path      string
	vars      varFlags
	stateFile string
	targets   []string
	replace   []string
	// ignoreState plans as if nothing had run (validate, graph).
	ignoreState bool
	// lockState holds the state's lock for the whole operation, as a run
	// that records state must (apply).
	lockState bool
	// saved is a saved plan to apply instead of planning afresh; its
	// workload path and variables replace path and vars.
	saved *engine.Plan
}

// operation is everything a verb that needs a plan works from: the
// workload, the plugins, the state and the calibration. Every such verb
// gets it from openOperation, so none can plan from less than another.
type operation struct {
	req      planRequest
	workload *engine.Workload
	plugins  *planningPlugins
	// opts is what the plan is built with.
	opts engine.PlanOptions
	// stateFile is the locked state, when req.lockState asked for it.
	stateFile *engine.StateFile
	// planFile is the saved plan's path, when req.saved is set.
	planFile string
}

// openOperation loads what req names. The operation is returned even on
// error, with as much as was loaded, so diagnostics can show source
// lines; Close it either way.
func openOperation(ctx context.Context, env *cliEnv, req planRequest) (*operation, hcl.Diagnostics) {
	op := &operation{req: req}
	inputs, diags := op.inputs(env)
	if diags.HasErrors() {
		return op, diags
	}
	w, wdiags := engine.LoadWorkload(op.req.path, inputs)
	op.workload, diags = w, append(diags, wdiags...)
	plugins, err := loadPlugins(ctx)
	if err != nil {
		return op, append(diags, errorDiagnostic("Cannot load plugins", err))
	}
	op.plugins = plugins
	if diags.HasErrors() {
		// Report the stages' reference problems too, so one run shows
		// every error a file has.
		return op, append(diags, w.CheckStages(ctx, plugins)...)
	}
	return op, append(diags, op.loadPlanOptions()...)
}

// inputs are the variables the workload loads with: a saved plan's own,
// or the command line's and the environment's.
func (op *operation) inputs(env *cliEnv) (dsl.Inputs, hcl.Diagnostics) {
	if op.req.saved == nil {
		return dsl.Inputs{Vars: op.req.vars.vars, VarFiles: op.req.vars.varFiles, Environ: env.environ}, nil
	}
	inputs, err := engine.SavedPlanInputs(op.req.saved)
	if err != nil {
		return inputs, hcl.Diagnostics{errorDiagnostic("Cannot read the saved plan's variables", err)}
	}
	op.planFile, op.req.path = op.req.path, op.req.saved.Workload
	return inputs, nil
}

// loadPlanOptions reads the calibration and the state.
func (op *operation) loadPlanOptions() hcl.Diagnostics {
	cal, err := calibration.Load(calibration.DefaultPath)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read calibration",
			Detail: fmt.Sprintf("%s: %s. Fix or remove the file to plan with datasheet figures.", calibration.DefaultPath, err)}}
	}
	op.opts = engine.PlanOptions{Plugins: op.plugins, Targets: op.req.targets, Replace: op.req.replace, Version: version, Calibration: cal,
		Clusters: clusterProbe}
	switch {
	case op.req.ignoreState:
	case op.req.lockState:
		sf, err := engine.OpenState(op.req.statePath(), op.workload.Path)
		if err != nil {
			return hcl.Diagnostics{errorDiagnostic("Cannot open state", err)}
		}
		op.stateFile, op.opts.State = sf, sf.Snapshot()
	default:
		st, err := readState(op.req.statePath())
		if err != nil {
			return hcl.Diagnostics{errorDiagnostic("Cannot read state", err)}
		}
		op.opts.State = st
	}
	return nil
}

// plan is the plan the operation runs: the saved one while it is still
// current, or a new one.
func (op *operation) plan(ctx context.Context) (*engine.Plan, hcl.Diagnostics) {
	if saved := op.req.saved; saved != nil {
		if err := engine.CheckSavedPlan(saved, op.workload, op.opts.State); err != nil {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Saved plan is stale",
				Detail: fmt.Sprintf("%s: %s.", op.planFile, err)}}
		}
		return saved, nil
	}
	return engine.BuildPlan(ctx, op.workload, op.opts)
}

// Close releases the plugins and the state's lock.
func (op *operation) Close() {
	if op.stateFile != nil {
		op.stateFile.Close()
	}
	if op.plugins != nil {
		op.plugins.Close()
	}
}

// buildPlan opens an operation and plans it, for the verbs that need
// nothing else from it.
func buildPlan(ctx context.Context, env *cliEnv, req planRequest) (*engine.Workload, *engine.Plan, hcl.Diagnostics) {
	op, diags := openOperation(ctx, env, req)
	defer op.Close()
	if diags.HasErrors() {
		return op.workload, nil, diags
	}
	plan, pdiags := op.plan(ctx)
	return op.workload, plan, append(diags, pdiags...)
}

func errorDiagnostic(summary string, err error) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: err.Error() + "."}
}

func (r planRequest) statePath() string {
	if r.stateFile != "" {
		return r.stateFile
	}
	return engine.DefaultStatePath(r.path)
}

// readState returns nil state when none has been written yet.
func readState(path string) (*state.State, error) {
	st, err := state.Read(path)
	if errors.Is(err, state.ErrNotExist) {
		return nil, nil
	}
	return st, err
}

// sources returns the workload's file contents for diagnostics.
func sources(w *engine.Workload) map[string][]byte {
	if w == nil || w.Config == nil {
		return nil
	}
	return w.Config.Sources
}

// reportDiagnostics prints diagnostics to stderr and says whether any is an
// error.
func reportDiagnostics(env *cliEnv, w *engine.Workload, diags hcl.Diagnostics, colour bool) bool {
	writeDiagnostics(env.stderr, diags, sources(w), colour)
	if n := countErrors(diags); n > 0 {
		fmt.Fprintf(env.stderr, "%d error(s) found.\n", n)
		return true
	}
	return false
}

func countErrors(diags hcl.Diagnostics) int {
	n := 0
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			n++
		}
	}
	return n
}
