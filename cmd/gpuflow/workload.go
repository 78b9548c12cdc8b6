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

// planRequest is what plan, validate and graph need to build a plan.
type planRequest struct {
	path      string
	vars      varFlags
	stateFile string
	targets   []string
	replace   []string
	// ignoreState plans as if nothing had run (validate, graph).
	ignoreState bool
}

// buildPlan loads the workload and plans it. The workload is returned even
// on error, so diagnostics can show source lines.
func buildPlan(ctx context.Context, env *cliEnv, req planRequest) (*engine.Workload, *engine.Plan, hcl.Diagnostics) {
	w, diags := engine.LoadWorkload(req.path, dsl.Inputs{Vars: req.vars.vars, VarFiles: req.vars.varFiles, Environ: env.environ})
	plugins, err := loadPlugins(ctx)
	if err != nil {
		return w, nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot load plugins", Detail: err.Error() + "."})
	}
	defer plugins.Close()
	if diags.HasErrors() {
		// Report the stages' reference problems too, so one run shows
		// every error a file has.
		return w, nil, append(diags, w.CheckStages(ctx, plugins)...)
	}
	cal, err := calibration.Load(calibration.DefaultPath)
	if err != nil {
		return w, nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read calibration",
			Detail: fmt.Sprintf("%s: %s. Fix or remove the file to plan with datasheet figures.", calibration.DefaultPath, err)})
	}
	opts := engine.PlanOptions{Plugins: plugins, Targets: req.targets, Replace: req.replace, Version: version, Calibration: cal}
	if !req.ignoreState {
		st, err := readState(req.statePath())
		if err != nil {
			return w, nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read state", Detail: err.Error() + "."})
		}
		opts.State = st
	}
	plan, pdiags := engine.BuildPlan(ctx, w, opts)
	return w, plan, append(diags, pdiags...)
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
