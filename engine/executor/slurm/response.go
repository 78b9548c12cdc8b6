package slurm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// tailLines is how many lines of a job's output a diagnostic quotes.
const tailLines = 10

// response turns how the last job ended, and what its nodes reported,
// into the stage's result. The stage succeeds only when the job completed
// and every node's plugin succeeded; its outputs are the first node's.
func (r *Run) response(o Outcome, results []*rundir.Result, attempts int, runDir string) *api.ApplyResponse {
	nodeDiags, missing := r.nodeDiagnostics(results, o.EndedBySlurm())
	if o.State == StateCompleted && len(missing) == 0 && !nodeDiags.HasErrors() {
		return &api.ApplyResponse{Outputs: results[0].Outputs, Diagnostics: nodeDiags}
	}
	d := o.Diagnostic(r.job, attempts)
	if len(missing) > 0 && !o.EndedBySlurm() {
		d.Detail += r.missingDetail(o, missing, runDir)
	}
	// A job that failed because a plugin did is explained best by the
	// plugin; a job Slurm ended (time limit, memory, a node) by Slurm.
	if (o.State == StateFailed || o.State == StateCompleted) && nodeDiags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: append(nodeDiags, d)}
	}
	return &api.ApplyResponse{Diagnostics: append(api.Diagnostics{d}, nodeDiags...)}
}

// nodeDiagnostics gathers the plugins' diagnostics from every node, and
// lists the nodes that wrote no result. A node host's own failure is left
// out when Slurm killed what it ran.
func (r *Run) nodeDiagnostics(results []*rundir.Result, endedBySlurm bool) (api.Diagnostics, []int) {
	var diags api.Diagnostics
	var missing []int
	for n, res := range results {
		switch {
		case res == nil:
			missing = append(missing, n)
		case res.Error != "" && !endedBySlurm:
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Node host failed",
				Detail: fmt.Sprintf("The node host on node %d (%s) could not run the stage: %s.", n, res.Host, res.Error)})
		}
		if res == nil {
			continue
		}
		for _, d := range res.Diagnostics {
			if len(results) > 1 {
				d.Detail = fmt.Sprintf("On node %d (%s): %s", n, res.Host, d.Detail)
			}
			diags = append(diags, d)
		}
	}
	return diags, missing
}

// missingDetail says which nodes reported nothing and quotes the last
// lines the job and those nodes wrote, where a missing gpuflow on a node,
// a crash or a kill shows.
func (r *Run) missingDetail(o Outcome, missing []int, runDir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, " Node(s) %s wrote no result in %s; the run directory must be on a file system every node shares, with gpuflow at %s on each node.",
		joinInts(missing), rundir.JobDir(runDir, o.JobID), r.opts.Executable)
	if o.JobID == "" {
		return b.String()
	}
	quote := func(path string) {
		if lines := fileTail(path, tailLines); len(lines) > 0 {
			fmt.Fprintf(&b, "\nThe last lines of %s:\n  %s", path, strings.Join(lines, "\n  "))
		}
	}
	quote(batchOutput(runDir, o.JobID))
	for _, n := range missing {
		quote(filepath.Join(rundir.JobDir(runDir, o.JobID), fmt.Sprintf("node-%d.out", n)))
	}
	return b.String()
}

// fileTail returns up to n last lines of a file; none if it cannot be read.
func fileTail(path string, n int) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines[max(0, len(lines)-n):]
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
