package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/executor/kubernetes"
)

// clusterProbe asks the Kubernetes clusters kubernetes executors name
// whether they serve JobSet; a cluster that does not answer within the
// timeout gets an Indexed Job.
var clusterProbe = kubernetes.Probe{Timeout: 5 * time.Second}

// writeExecutorHuman shows where a stage runs when not on this machine,
// and the whole job script or manifest, as apply will submit it, for
// review.
func writeExecutorHuman(w io.Writer, x *engine.ExecutorPlan, pal *palette) {
	if x.Kubernetes != nil {
		writeKubernetesHuman(w, x, pal)
		return
	}
	limit := "the partition's default"
	if x.TimeLimitS > 0 {
		limit = formatDuration(x.TimeLimitS)
	}
	fmt.Fprintf(w, "      %-12s %s: %d node(s) x %d GPUs, time limit %s, retries %d\n", "executor", x.Address,
		x.Nodes, x.GPUsPerNode, limit, x.Retries)
	writeBlock(w, "job script", x.Script, pal)
}

func writeKubernetesHuman(w io.Writer, x *engine.ExecutorPlan, pal *palette) {
	j := x.Kubernetes
	as := "an Indexed Job and a headless Service"
	if j.JobSet {
		as = "a JobSet (the cluster serves the JobSet API)"
	}
	limit := "none"
	if j.TimeLimitS > 0 {
		limit = formatDuration(j.TimeLimitS)
	}
	fmt.Fprintf(w, "      %-12s %s: %d pod(s) x %d GPUs as %s in namespace %s, time limit %s\n", "executor", x.Address,
		x.Nodes, x.GPUsPerNode, as, j.Namespace, limit)
	writeBlock(w, "manifest", x.Manifest, pal)
}

// writeBlock writes a multi-line text under a key, dimmed.
func writeBlock(w io.Writer, key, text string, pal *palette) {
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		k := ""
		if i == 0 {
			k = key
		}
		if line == "" {
			fmt.Fprintln(w) // no trailing blanks
			continue
		}
		fmt.Fprintf(w, "      %-12s %s\n", k, pal.dim.Sprint(line))
	}
}
