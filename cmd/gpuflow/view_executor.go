package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpuflow/gpuflow/engine"
)

// writeExecutorHuman shows where a stage runs when not on this machine,
// and the whole job script, as apply will submit it, for review.
func writeExecutorHuman(w io.Writer, x *engine.ExecutorPlan, pal *palette) {
	limit := "the partition's default"
	if x.TimeLimitS > 0 {
		limit = formatDuration(x.TimeLimitS)
	}
	fmt.Fprintf(w, "      %-12s %s: %d node(s) x %d GPUs, time limit %s, retries %d\n", "executor", x.Address,
		x.Nodes, x.GPUsPerNode, limit, x.Retries)
	for i, line := range strings.Split(strings.TrimRight(x.Script, "\n"), "\n") {
		key := ""
		if i == 0 {
			key = "job script"
		}
		if line == "" {
			fmt.Fprintln(w) // no trailing blanks
			continue
		}
		fmt.Fprintf(w, "      %-12s %s\n", key, pal.dim.Sprint(line))
	}
}
