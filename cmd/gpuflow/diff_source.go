package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/engine"
)

// sideLoader turns one side of a diff (a saved plan, a workload path or
// git:REF:PATH) into a plan, printing what went wrong itself.
type sideLoader struct {
	env    *cliEnv
	colour bool
	// req carries the variables and targets; its path is set per side.
	req planRequest
	// gitDir is where git runs; empty means the working directory.
	gitDir string
}

// load reads or plans one side; which is "OLD" or "NEW" for messages.
func (l *sideLoader) load(ctx context.Context, which, source string) (*engine.Plan, bool) {
	if !isGitSource(source) {
		return l.loadPath(ctx, which, source, source)
	}
	spec, err := parseGitSource(source)
	if err != nil {
		fmt.Fprintf(l.env.stderr, "Error: %s %s: %s\n", which, source, err)
		return nil, false
	}
	path, cleanup, err := checkoutGit(ctx, l.gitDir, spec)
	if err != nil {
		fmt.Fprintf(l.env.stderr, "Error: %s %s: %s\n", which, source, err)
		return nil, false
	}
	defer cleanup()
	return l.loadPath(ctx, which, source, path)
}

// loadPath reads a saved plan, or plans a workload: a directory or a
// .hcl file. Anything else is taken for a saved plan, whose reader says
// what a plan file must look like.
func (l *sideLoader) loadPath(ctx context.Context, which, source, path string) (*engine.Plan, bool) {
	fi, err := os.Stat(path)
	if strings.EqualFold(filepath.Ext(path), ".hcl") || (err == nil && fi.IsDir()) {
		return l.planWorkload(ctx, which, source, path)
	}
	plan, err := readPlanFile(path)
	if err != nil {
		fmt.Fprintf(l.env.stderr, "Error: %s %s: %s\n", which, source, err)
		return nil, false
	}
	return plan, true
}

// planWorkload plans a workload as it is, without state. Only errors are
// printed: the diff is about the change, and gpuflow plan shows warnings.
func (l *sideLoader) planWorkload(ctx context.Context, which, source, path string) (*engine.Plan, bool) {
	req := l.req
	req.path = path
	w, plan, diags := buildPlan(ctx, l.env, req)
	var errs hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d)
		}
	}
	if len(errs) > 0 {
		writeDiagnostics(l.env.stderr, errs, sources(w), l.colour)
		fmt.Fprintf(l.env.stderr, "%d error(s) found planning %s %s.\n", len(errs), which, source)
		return nil, false
	}
	return plan, true
}
