package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gpuflow/gpuflow/engine"
)

func runGraph(env *cliEnv, args []string) int {
	var req planRequest
	var format string
	fs := newFlagSet("graph", env, "[PATH]")
	req.vars.register(fs.FlagSet)
	fs.StringVar(&format, "format", "dot", "Output format: dot or mermaid")
	if !parseFlags(fs, args) {
		return 1
	}
	if format != "dot" && format != "mermaid" {
		fmt.Fprintf(env.stderr, "gpuflow graph: -format %q is not supported; use dot or mermaid\n", format)
		return 1
	}
	path, ok := onePath(fs, env)
	if !ok {
		return 1
	}
	req.path = path
	w, plan, diags := buildPlan(context.Background(), env, req)
	if reportDiagnostics(env, w, diags, false) {
		return 1
	}
	if format == "mermaid" {
		writeMermaid(env.stdout, plan)
	} else {
		writeDot(env.stdout, plan)
	}
	return 0
}

// writeDot draws stages as boxes labelled with their action, and edges from
// each stage to what it depends on, as terraform graph does.
func writeDot(w io.Writer, plan *engine.Plan) {
	fmt.Fprintln(w, "digraph gpuflow {")
	fmt.Fprintln(w, "  rankdir = \"BT\";")
	fmt.Fprintln(w, "  node [shape = box];")
	for _, sp := range plan.Stages {
		fmt.Fprintf(w, "  %q [label = %q];\n", sp.Address, sp.Address+"\\n"+sp.Action)
	}
	for _, e := range plan.Edges {
		fmt.Fprintf(w, "  %q -> %q;\n", e[0], e[1])
	}
	fmt.Fprintln(w, "}")
}

// writeMermaid draws the same graph as a Mermaid flowchart, upstream first.
func writeMermaid(w io.Writer, plan *engine.Plan) {
	fmt.Fprintln(w, "flowchart TD")
	id := func(addr string) string { return strings.NewReplacer(".", "_", "-", "_").Replace(addr) }
	for _, sp := range plan.Stages {
		fmt.Fprintf(w, "  %s[\"%s<br/>%s\"]\n", id(sp.Address), sp.Address, sp.Action)
	}
	for _, e := range plan.Edges {
		fmt.Fprintf(w, "  %s --> %s\n", id(e[1]), id(e[0]))
	}
}
