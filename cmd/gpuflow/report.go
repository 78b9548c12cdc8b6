package main

import (
	"bytes"
	"fmt"

	"github.com/gpuflow/gpuflow/engine/report"
	"github.com/gpuflow/gpuflow/engine/state"
)

func init() {
	registerCommand("report", command{"Write an HTML or Markdown report of the latest runs", runReport})
}

// runReport writes the report of the workload's latest runs: HTML by
// default, Markdown with -format markdown; to stdout, or to -o FILE
// written whole.
func runReport(env *cliEnv, args []string) int {
	var a stateArgs
	var format, out string
	fs := newFlagSet("report", env, "[PATH]")
	fs.StringVar(&format, "format", "html", "Output format: html or markdown")
	fs.StringVar(&out, "o", "", "Write the report to FILE instead of stdout")
	fs.StringVar(&a.stateFile, "state", "", "State file (default .gpuflow/state/<workload>.json)")
	if !parseFlags(fs, args) {
		return 1
	}
	if format != "html" && format != "markdown" {
		fmt.Fprintf(env.stderr, "gpuflow report: -format %q is not supported; use html or markdown\n", format)
		return 1
	}
	switch fs.NArg() {
	case 0:
	case 1:
		a.workload = fs.Arg(0)
	default:
		fmt.Fprintln(env.stderr, "gpuflow report: takes at most one workload PATH")
		return 1
	}
	if err := a.resolve(); err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return 1
	}
	r, err := report.Load(a.file)
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return 1
	}
	var b bytes.Buffer
	if format == "markdown" {
		err = r.Markdown(&b)
	} else {
		err = r.HTML(&b)
	}
	if err == nil && out != "" {
		err = state.WriteFileAtomic(out, b.Bytes())
	} else if err == nil {
		_, err = env.stdout.Write(b.Bytes())
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: writing the report: %s\n", err)
		return 1
	}
	if out != "" {
		fmt.Fprintf(env.stdout, "Wrote the report of %d stages to %s.\n", len(r.Sections), out)
	}
	return 0
}
