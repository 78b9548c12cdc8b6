package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/plugins/builtin"
	"github.com/gpuflow/gpuflow/plugins/client"
)

func init() {
	registerCommand("apply", command{"Run the plan's stages and record them in state", runApply})
}

type applyArgs struct {
	req          planRequest
	autoApprove  bool
	parallelism  int
	json         bool
	noColor      bool
	stageTimeout time.Duration
	stopGrace    time.Duration
}

func parseApplyArgs(env *cliEnv, args []string) (*applyArgs, bool) {
	a := &applyArgs{}
	fs := newFlagSet("apply", env, "PATH | PLANFILE")
	a.req.vars.register(fs.FlagSet)
	fs.BoolVar(&a.autoApprove, "auto-approve", false, "Run without showing the plan and asking first")
	fs.IntVar(&a.parallelism, "parallelism", engine.DefaultParallelism, "Run at most N stages at once")
	fs.BoolVar(&a.json, "json", false, "Report progress as JSON lines (needs -auto-approve or a saved plan)")
	fs.StringVar(&a.req.stateFile, "state", "", "State file to use (default .gpuflow/state/<workload>.json)")
	fs.Var((*listFlag)(&a.req.targets), "target", "Run only this stage and what it needs (repeatable)")
	fs.Var((*listFlag)(&a.req.replace), "replace", "Run this stage again even if unchanged (repeatable)")
	fs.DurationVar(&a.stageTimeout, "stage-timeout", 0, "Stop any stage that runs longer than this (0: no limit)")
	fs.DurationVar(&a.stopGrace, "stop-grace", engine.DefaultStopGrace, "How long a stopped stage may take to end before it is killed")
	if !parseFlags(fs, args) {
		return nil, false
	}
	a.noColor = fs.common.noColor
	if a.parallelism < 1 {
		fmt.Fprintf(env.stderr, "gpuflow apply: -parallelism must be at least 1, not %d\n", a.parallelism)
		return nil, false
	}
	path, ok := onePath(fs, env)
	a.req.path = path
	return a, ok
}

func runApply(env *cliEnv, args []string) int {
	a, ok := parseApplyArgs(env, args)
	if !ok {
		return 1
	}
	view := newApplyView(env, a.json, env.useColor(a.noColor))
	defer view.Close()
	saved, err := readSavedPlanArg(a)
	if err != nil {
		view.Error(err)
		return 1
	}
	ctx, stop := interruptContext(view)
	defer stop()
	return applyWorkload(ctx, env, a, saved, view)
}

// readSavedPlanArg reads PATH as a saved plan when it is one (a file with
// a plan's format_version), or returns nil for a workload.
func readSavedPlanArg(a *applyArgs) (*engine.Plan, error) {
	if !looksLikePlanFile(a.req.path) {
		return nil, nil
	}
	plan, err := readPlanFile(a.req.path)
	if err != nil {
		return nil, err
	}
	var given []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"-var", len(a.req.vars.vars) > 0}, {"-var-file", len(a.req.vars.varFiles) > 0},
		{"-target", len(a.req.targets) > 0}, {"-replace", len(a.req.replace) > 0}} {
		if f.set {
			given = append(given, f.name)
		}
	}
	if len(given) > 0 {
		return nil, fmt.Errorf("%s cannot change a saved plan (%s); pass them to gpuflow plan -out instead", strings.Join(given, ", "), a.req.path)
	}
	return plan, nil
}

// looksLikePlanFile: a regular file that is not HCL and starts with '{'.
func looksLikePlanFile(path string) bool {
	if strings.HasSuffix(path, ".hcl") {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return false
	}
	r := bufio.NewReader(f)
	first, err := r.ReadByte()
	for err == nil && (first == ' ' || first == '\n' || first == '\t' || first == '\r') {
		first, err = r.ReadByte()
	}
	return err == nil && first == '{'
}

// interruptContext is cancelled by the first Ctrl-C (or SIGTERM), which
// stops the running stages; a second one ends gpuflow at once, and the
// kernel then ends the plugin processes.
func interruptContext(view applyView) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		view.Interrupted()
		signal.Stop(sigs)
		cancel()
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(sigs)
		cancel()
	}
}

func applyWorkload(ctx context.Context, env *cliEnv, a *applyArgs, saved *engine.Plan, view applyView) int {
	req := a.req
	req.lockState, req.saved = true, saved
	op, diags := openOperation(ctx, env, req)
	defer op.Close()
	if diags.HasErrors() {
		view.Diagnostics(diags, sources(op.workload))
		return 1
	}
	plan, ok := applyPlan(ctx, env, a, op, view)
	if !ok {
		return 1
	}
	if plan == nil {
		return 0
	}
	launcher, err := client.NewManager(client.Options{Builtins: builtin.Names()})
	if err != nil {
		view.Error(err)
		return 1
	}
	defer launcher.Close()
	view.Started(plan)
	w := op.workload
	res, diags := engine.Apply(ctx, plan, w, engine.ApplyOptions{
		Plugins: op.plugins, Launcher: engine.ClientLauncher(launcher), State: op.stateFile, RunsDir: engine.RunsDir,
		Parallelism: a.parallelism, StopGrace: a.stopGrace, StageTimeout: a.stageTimeout, Observer: view,
		CalibrationPath: calibration.DefaultPath,
	})
	if diags.HasErrors() {
		view.Diagnostics(diags, sources(w))
		return 1
	}
	view.Finished(res, sources(w))
	if !res.OK() {
		return 1
	}
	return 0
}

// applyPlan returns the plan to run: the saved one if still current, or a
// fresh one the user approved. A nil plan with ok means nothing to do.
func applyPlan(ctx context.Context, env *cliEnv, a *applyArgs, op *operation, view applyView) (*engine.Plan, bool) {
	plan, diags := op.plan(ctx)
	if diags.HasErrors() {
		view.Diagnostics(diags, sources(op.workload))
		return nil, false
	}
	if op.req.saved != nil {
		return plan, true
	}
	view.Diagnostics(diags, sources(op.workload)) // warnings
	if plan.Summary.Create+plan.Summary.Replace == 0 {
		view.NoChanges(plan)
		return nil, true
	}
	if a.autoApprove {
		return plan, true
	}
	if a.json || !env.isTerminal {
		view.Error(errors.New("apply needs approval: run it on a terminal to review the plan and answer yes, or pass -auto-approve"))
		return nil, false
	}
	view.Plan(plan)
	if !confirm(env) {
		view.Error(errors.New("apply cancelled: only 'yes' runs the plan"))
		return nil, false
	}
	return plan, true
}

// confirm asks on the terminal and accepts only "yes".
func confirm(env *cliEnv) bool {
	fmt.Fprint(env.stdout, "\nRun these stages? Only 'yes' will be accepted.\n  Enter a value: ")
	line, _ := bufio.NewReader(env.stdin).ReadString('\n')
	fmt.Fprintln(env.stdout)
	return strings.TrimSpace(line) == "yes"
}
