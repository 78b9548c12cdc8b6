package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/state"
)

// exitChanges is plan -detailed-exitcode's status when stages would run.
const exitChanges = 2

type planArgs struct {
	req planRequest
	// paths are the workloads to plan, each on its own; req.path is the
	// one being planned.
	paths        []string
	out          string
	json         bool
	detailedExit bool
	noColor      bool
	compare      compareFlags
}

func parsePlanArgs(env *cliEnv, args []string) (*planArgs, bool) {
	a := &planArgs{}
	fs := newFlagSet("plan", env, "[PATH...]")
	a.req.vars.register(fs.FlagSet)
	fs.StringVar(&a.out, "out", "", "Save the plan to FILE for a later apply")
	fs.BoolVar(&a.json, "json", false, "Print the plan as JSON")
	fs.BoolVar(&a.detailedExit, "detailed-exitcode", false, "Exit 2 when the plan has changes, 0 when none")
	fs.StringVar(&a.req.stateFile, "state", "", "State file to plan against (default .gpuflow/state/<workload>.json)")
	fs.Var((*listFlag)(&a.req.targets), "target", "Plan only this stage and what it needs (repeatable)")
	fs.Var((*listFlag)(&a.req.replace), "replace", "Plan this stage to run again even if unchanged (repeatable)")
	a.compare.register(fs.FlagSet)
	if !parseFlags(fs, args) {
		return nil, false
	}
	a.noColor = fs.common.noColor
	a.paths = workloadPaths(fs)
	a.req.path = a.paths[0]
	return a, onePlanOptions(env, fs, len(a.paths)) && a.compare.check(env)
}

// onePlanOptions refuses, with several PATHs, the options that make sense
// for one plan only: saving it, printing it as a document, comparing it,
// or naming its state and stages.
func onePlanOptions(env *cliEnv, fs *flagSet, paths int) bool {
	if paths < 2 {
		return true
	}
	var given []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "out", "json", "compare", "format", "state", "target", "replace":
			given = append(given, "-"+f.Name)
		}
	})
	if len(given) == 0 {
		return true
	}
	fmt.Fprintf(env.stderr, "gpuflow plan: with %s, give one PATH (got %d); plan the workloads one at a time\n", strings.Join(given, ", "), paths)
	return false
}

// runPlan plans each PATH as a workload of its own, one after the other.
// The status is the worst: 1 if any failed, else 2 if -detailed-exitcode
// and any has changes.
func runPlan(env *cliEnv, args []string) int {
	a, ok := parsePlanArgs(env, args)
	if !ok {
		return 1
	}
	status := 0
	for i, path := range a.paths {
		if i > 0 {
			fmt.Fprintln(env.stdout)
		}
		a.req.path = path
		if st := planOne(env, a); st == 1 || status == 0 {
			status = st
		}
	}
	return status
}

func planOne(env *cliEnv, a *planArgs) int {
	colour := env.useColor(a.noColor)
	w, plan, diags := buildPlan(context.Background(), env, a.req)
	if reportDiagnostics(env, w, diags, colour) {
		return 1
	}
	if a.out != "" {
		if err := savePlan(a.out, plan); err != nil {
			fmt.Fprintf(env.stderr, "Error: saving the plan to -out %s: %s\n", a.out, err)
			return 1
		}
	}
	if a.compare.old != "" {
		return runCompare(env, a, plan)
	}
	if a.json {
		writeJSON(env, redactSensitive(plan))
	} else {
		writePlanHuman(env.stdout, plan, newPalette(colour))
		if a.out != "" {
			fmt.Fprintf(env.stdout, "\nSaved the plan to %s. Apply exactly this plan with: gpuflow apply %s\n", a.out, a.out)
		}
	}
	if a.detailedExit && plan.Summary.Create+plan.Summary.Replace > 0 {
		return exitChanges
	}
	return 0
}

// savePlan writes the plan document atomically: a saved plan is either
// whole or absent.
func savePlan(path string, plan *engine.Plan) error {
	b, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFileAtomic(path, append(b, '\n'))
}

// redactSensitive hides sensitive variable values from printed JSON; the
// saved plan keeps them because apply needs them.
func redactSensitive(plan *engine.Plan) *engine.Plan {
	out := *plan
	out.Variables = map[string]engine.PlanVariable{}
	for name, v := range plan.Variables {
		if v.Sensitive {
			v.Value = json.RawMessage("null")
		}
		out.Variables[name] = v
	}
	return &out
}

func writeJSON(env *cliEnv, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: encoding JSON: %s\n", err)
		return
	}
	fmt.Fprintln(env.stdout, string(b))
}
