package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/report"
	"github.com/gpuflow/gpuflow/engine/runlog"
)

func init() {
	registerCommand("runs", command{"List a stage's earlier runs, or compare two", runRuns})
}

const runsUsage = "Usage: gpuflow runs [ADDR] | runs compare ADDR/RUN ADDR/RUN (RUN: a run ID, or -1 for the latest, -2 the one before)"

// runsDir is where apply keeps run folders.
var runsDir = filepath.Join(engine.DataDir, "runs")

// runRuns lists the stages with runs, the runs of one stage with their
// key figures, or compares two runs.
func runRuns(env *cliEnv, args []string) int {
	if len(args) > 0 && args[0] == "compare" {
		return runsCompare(env, args[1:])
	}
	fs := newFlagSet("runs", env, "[ADDR]")
	if !parseFlags(fs, args) {
		return 1
	}
	switch fs.NArg() {
	case 0:
		return runsStages(env)
	case 1:
		return runsOfStage(env, strings.TrimPrefix(fs.Arg(0), "stage."))
	}
	fmt.Fprintln(env.stderr, runsUsage)
	return 1
}

// runsStages lists every stage with runs: how many, and the latest.
func runsStages(env *cliEnv) int {
	entries, err := os.ReadDir(runsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return 1
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tRUNS\tLATEST")
	for _, e := range entries {
		ids, err := runlog.List(runsDir, e.Name())
		if err != nil || len(ids) == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", e.Name(), len(ids), ids[len(ids)-1])
	}
	if len(entries) == 0 {
		fmt.Fprintf(env.stdout, "No runs in %s.\n", runsDir)
		return 0
	}
	tw.Flush()
	return 0
}

// runsOfStage lists a stage's runs, oldest first, with the input hash
// each was given and the last value of each metric.
func runsOfStage(env *cliEnv, stage string) int {
	ids, err := runlog.List(runsDir, stage)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(ids) == 0) {
		fmt.Fprintf(env.stderr, "Error: no runs of stage %s in %s; gpuflow runs lists the stages that have some\n", stage, runsDir)
		return 1
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "Error: %s\n", err)
		return 1
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tINPUTS\tFIGURES")
	for _, id := range ids {
		r, err := report.LoadRun(runsDir, stage, id)
		if err != nil {
			fmt.Fprintf(env.stderr, "Error: %s\n", err)
			return 1
		}
		hash := "not recorded"
		if r.Inputs != nil {
			hash = strings.TrimPrefix(r.Inputs.InputHash, "sha256:")
			hash = hash[:min(12, len(hash))]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", id, hash, r.KeyFigures())
	}
	tw.Flush()
	return 0
}

// runsCompare sets two runs side by side.
func runsCompare(env *cliEnv, args []string) int {
	fs := newFlagSet("runs compare", env, "ADDR/RUN-ID ADDR/RUN-ID")
	if !parseFlags(fs, args) {
		return 1
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(env.stderr, runsUsage)
		return 1
	}
	var runs [2]*report.Run
	for i, arg := range fs.Args() {
		stage, id, ok := strings.Cut(strings.TrimPrefix(arg, "stage."), "/")
		if !ok || id == "" {
			fmt.Fprintf(env.stderr, "Error: %q names no run; write ADDR/RUN-ID, as gpuflow runs ADDR lists them\n", arg)
			return 1
		}
		id, err := resolveRunID(stage, id)
		if err != nil {
			fmt.Fprintf(env.stderr, "Error: %s\n", err)
			return 1
		}
		if runs[i], err = report.LoadRun(runsDir, stage, id); err != nil {
			fmt.Fprintf(env.stderr, "Error: %s\n", err)
			return 1
		}
	}
	inputs, results := report.CompareRuns(runs[0], runs[1])
	writeRunsTable(env.stdout, inputs, "No input differs.")
	fmt.Fprintln(env.stdout)
	writeRunsTable(env.stdout, results, "Neither run reported a metric.")
	return 0
}

// resolveRunID turns -1 (the latest run), -2 (the one before) and so on
// into a run ID; any other ID is kept.
func resolveRunID(stage, id string) (string, error) {
	var back int
	if _, err := fmt.Sscanf(id, "-%d", &back); err != nil || back < 1 || fmt.Sprintf("-%d", back) != id {
		return id, nil
	}
	ids, err := runlog.List(runsDir, stage)
	if err != nil || back > len(ids) {
		return "", fmt.Errorf("stage %s has %d runs, so %s names none", stage, len(ids), id)
	}
	return ids[len(ids)-back], nil
}

func writeRunsTable(w io.Writer, t report.Table, empty string) {
	fmt.Fprintf(w, "%s:\n", t.Title)
	if len(t.Rows) == 0 {
		fmt.Fprintf(w, "  %s\n", empty)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  %s\n", strings.Join(t.Header, "\t"))
	for _, row := range t.Rows {
		fmt.Fprintf(tw, "  %s\n", strings.Join(row, "\t"))
	}
	tw.Flush()
}
