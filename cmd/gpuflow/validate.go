package main

import (
	"context"
	"fmt"
)

// runValidate checks each PATH as a workload of its own, reporting every
// one, and exits 1 if any is invalid.
func runValidate(env *cliEnv, args []string) int {
	var vars varFlags
	fs := newFlagSet("validate", env, "[PATH...]")
	vars.register(fs.FlagSet)
	if !parseFlags(fs, args) {
		return 1
	}
	status := 0
	for _, path := range workloadPaths(fs) {
		if !validateOne(env, planRequest{path: path, vars: vars, ignoreState: true}, fs.colour(env)) {
			status = 1
		}
	}
	return status
}

func validateOne(env *cliEnv, req planRequest, colour bool) bool {
	w, _, diags := buildPlan(context.Background(), env, req)
	if reportDiagnostics(env, w, diags, colour) {
		return false
	}
	fmt.Fprintf(env.stdout, "%s The workload %s is valid.\n", newPalette(colour).green.Sprint("Success!"), req.path)
	return true
}
