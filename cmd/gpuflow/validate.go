package main

import (
	"context"
	"fmt"
)

func runValidate(env *cliEnv, args []string) int {
	var req planRequest
	fs := newFlagSet("validate", env, "[PATH]")
	req.vars.register(fs.FlagSet)
	if !parseFlags(fs, args) {
		return 1
	}
	path, ok := onePath(fs, env)
	if !ok {
		return 1
	}
	req.path, req.ignoreState = path, true
	colour := fs.colour(env)
	w, _, diags := buildPlan(context.Background(), env, req)
	if reportDiagnostics(env, w, diags, colour) {
		return 1
	}
	fmt.Fprintf(env.stdout, "%s The workload %s is valid.\n", newPalette(colour).green.Sprint("Success!"), path)
	return 0
}
