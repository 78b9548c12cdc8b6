package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/state"
)

// exitChanges is plan -detailed-exitcode's status when stages would run.
const exitChanges = 2

type planArgs struct {
	req          planRequest
	out          string
	json         bool
	detailedExit bool
	noColor      bool
	compare      compareFlags
}

func parsePlanArgs(env *cliEnv, args []string) (*planArgs, bool) {
	a := &planArgs{}
	fs := newFlagSet("plan", env, "PATH")
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
	path, ok := onePath(fs, env)
	a.req.path = path
	return a, ok && a.compare.check(env)
}

func runPlan(env *cliEnv, args []string) int {
	a, ok := parsePlanArgs(env, args)
	if !ok {
		return 1
	}
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
