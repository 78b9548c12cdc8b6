package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/plandiff"
)

// Diff output formats.
const (
	formatHuman    = "human"
	formatJSON     = "json"
	formatMarkdown = "markdown"
)

func init() {
	registerCommand("diff", command{"Compare two plans: saved, planned now, or at a git ref", runDiff})
}

type diffArgs struct {
	old, new string
	vars     varFlags
	format   string
	json     bool
	noColor  bool
}

func parseDiffArgs(env *cliEnv, args []string) (*diffArgs, bool) {
	a := &diffArgs{}
	fs := newFlagSet("diff", env, "OLD NEW")
	a.vars.register(fs.FlagSet)
	fs.StringVar(&a.format, "format", formatHuman, "Output format: human, json or markdown")
	fs.BoolVar(&a.json, "json", false, "Print the diff as JSON (same as -format json)")
	if !parseFlags(fs, args) {
		return nil, false
	}
	a.noColor = fs.common.noColor
	if fs.NArg() != 2 {
		fmt.Fprintf(env.stderr, "gpuflow diff: expected OLD and NEW, got %d argument(s); each is a saved plan, a workload path or git:REF:PATH\n", fs.NArg())
		fs.Usage()
		return nil, false
	}
	a.old, a.new = fs.Arg(0), fs.Arg(1)
	format, ok := diffFormat(env, a.format, a.json)
	a.format = format
	return a, ok
}

// diffFormat settles -format and -json, which must agree.
func diffFormat(env *cliEnv, format string, asJSON bool) (string, bool) {
	switch {
	case asJSON && format != formatHuman && format != formatJSON:
		fmt.Fprintf(env.stderr, "Error: -json and -format %s ask for two formats; give one\n", format)
		return "", false
	case asJSON:
		return formatJSON, true
	case format == formatHuman || format == formatJSON || format == formatMarkdown:
		return format, true
	}
	fmt.Fprintf(env.stderr, "Error: unknown -format %q; use human, json or markdown\n", format)
	return "", false
}

func runDiff(env *cliEnv, args []string) int {
	a, ok := parseDiffArgs(env, args)
	if !ok {
		return 1
	}
	ctx := context.Background()
	sides := &sideLoader{env: env, colour: env.useColor(a.noColor), req: planRequest{vars: a.vars, ignoreState: true}}
	old, ok := sides.load(ctx, "OLD", a.old)
	if !ok {
		return 1
	}
	new, ok := sides.load(ctx, "NEW", a.new)
	if !ok {
		return 1
	}
	return showDiff(env, compare(old, a.old, new, a.new), a.format, a.noColor)
}

// compare diffs two plans and records where each came from.
func compare(old *engine.Plan, oldSource string, new *engine.Plan, newSource string) *plandiff.Diff {
	d := plandiff.Compare(old, new)
	d.Old.Source, d.New.Source = oldSource, newSource
	return d
}

// showDiff prints the diff and returns the exit status: 2 when the plans
// differ, 0 when they do not.
func showDiff(env *cliEnv, d *plandiff.Diff, format string, noColor bool) int {
	switch format {
	case formatJSON:
		writeJSON(env, d)
	case formatMarkdown:
		writeDiffMarkdown(env.stdout, d)
	default:
		writeDiffHuman(env.stdout, d, newPalette(env.useColor(noColor)))
	}
	if d.HasChanges() {
		return exitChanges
	}
	return 0
}

// compareFlags are plan's -compare options: the plan is compared with
// OLD instead of printed.
type compareFlags struct {
	old    string
	format string
}

func (c *compareFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.old, "compare", "", "Compare the plan with OLD (a saved plan, a workload path or git:REF:PATH) and print the diff")
	fs.StringVar(&c.format, "format", formatHuman, "With -compare: human or markdown (-json prints the diff as JSON)")
}

// runCompare is plan -compare: OLD is planned with plan's variables and
// targets, then compared with plan, the current plan of PATH.
func runCompare(env *cliEnv, a *planArgs, plan *engine.Plan) int {
	format, ok := diffFormat(env, a.compare.format, a.json)
	if !ok {
		return 1
	}
	req := planRequest{vars: a.req.vars, targets: a.req.targets, ignoreState: true}
	sides := &sideLoader{env: env, colour: env.useColor(a.noColor), req: req}
	old, ok := sides.load(context.Background(), "OLD", a.compare.old)
	if !ok {
		return 1
	}
	return showDiff(env, compare(old, a.compare.old, plan, a.req.path), format, a.noColor)
}

// isGitSource reports whether a diff side names a git ref.
func isGitSource(s string) bool { return strings.HasPrefix(s, gitPrefix) }

// check refuses -format without -compare, where plan has no use for it.
func (c *compareFlags) check(env *cliEnv) bool {
	if c.old == "" && c.format != formatHuman {
		fmt.Fprintf(env.stderr, "Error: -format %s applies to -compare only; plan prints JSON with -json\n", c.format)
		return false
	}
	return true
}
