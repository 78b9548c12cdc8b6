package slurm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// fakeJob says how one submitted job behaves in the fake Slurm.
type fakeJob struct {
	// states are what squeue says at each poll, the last one repeated:
	// STATE, or STATE:REASON (default reason Resources).
	states []string
	// final is sacct's job line after the end: "STATE|EXIT"; steps are
	// further "STATE|EXIT" step lines.
	final string
	// early are sacct's job lines ("STATE|EXIT") at its first calls
	// after the end, before final: a record still being written.
	early []string
	steps []string
	// nodes write each node's events and result into the job directory
	// once the job runs, standing in for the node hosts.
	nodes func(jobDir string)
	// batchOutput is what the job's batch output file holds.
	batchOutput string
}

// fakeSlurm answers sbatch, squeue, sacct and scancel from a list of jobs
// in submission order, and records every command.
type fakeSlurm struct {
	mu    sync.Mutex
	jobs  []fakeJob
	polls map[string]int
	// sacctCalls counts sacct's answers per job (fakeJob.early).
	sacctCalls map[string]int
	runDir     string
	ran        map[string]bool
	// cancelled jobs show CANCELLED from then on.
	cancelled map[string]bool
	calls     []string
	// sbatchErr makes sbatch fail.
	sbatchErr error
	// noAccounting makes sacct fail as without slurmdbd.
	noAccounting bool
	// slowCancel: scancel is recorded, but the job goes on running, as
	// while slurmctld has yet to act on it.
	slowCancel bool
}

func newFakeSlurm(jobs ...fakeJob) *fakeSlurm {
	return &fakeSlurm{jobs: jobs, polls: map[string]int{}, sacctCalls: map[string]int{}, ran: map[string]bool{}, cancelled: map[string]bool{}}
}

func (f *fakeSlurm) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name+" "+strings.Join(args, " "))
	switch name {
	case "sbatch":
		return f.sbatch(args)
	case "squeue":
		return f.squeue(jobArg(args))
	case "sacct":
		if f.noAccounting {
			return nil, &CommandError{Name: "sacct", Stderr: "sacct: error: Slurm accounting storage is disabled"}
		}
		return f.sacct(jobArg(args))
	case "scancel":
		f.cancelled[args[0]] = !f.slowCancel
		return nil, nil
	}
	return nil, &CommandError{Name: name, NotFound: true, Err: fmt.Errorf("no %s", name)}
}

func (f *fakeSlurm) sbatch(args []string) ([]byte, error) {
	if f.sbatchErr != nil {
		return nil, f.sbatchErr
	}
	n := len(f.polls)
	if n >= len(f.jobs) {
		return nil, &CommandError{Name: "sbatch", Stderr: "sbatch: error: more jobs than the test planned"}
	}
	id := fmt.Sprint(100 + n)
	f.polls[id] = 0
	f.runDir = args[len(args)-2]
	if out := f.jobs[n].batchOutput; out != "" {
		os.WriteFile(batchOutput(f.runDir, id), []byte(out), 0o644)
	}
	return []byte(id + "\n"), nil
}

func (f *fakeSlurm) job(id string) fakeJob {
	var n int
	fmt.Sscan(id, &n)
	return f.jobs[n-100]
}

func (f *fakeSlurm) squeue(id string) ([]byte, error) {
	j := f.job(id)
	i := min(f.polls[id], len(j.states)-1)
	f.polls[id]++
	state := j.states[i]
	if f.cancelled[id] {
		state = StateCancelled
	}
	if state == StateRunning && !f.ran[id] && j.nodes != nil {
		f.ran[id] = true
		j.nodes(rundir.JobDir(f.runDir, id))
	}
	if state == "gone" {
		return nil, &CommandError{Name: "squeue", Stderr: "slurm_load_jobs error: Invalid job id specified"}
	}
	state, reason, ok := strings.Cut(state, ":")
	if !ok {
		reason = "Resources"
	}
	return []byte(state + "|" + reason + "|n[1-2]\n"), nil
}

func (f *fakeSlurm) sacct(id string) ([]byte, error) {
	j := f.job(id)
	final := j.final
	if n := f.sacctCalls[id]; n < len(j.early) {
		final = j.early[n]
	}
	f.sacctCalls[id]++
	if f.cancelled[id] {
		final = "CANCELLED by 0|0:0"
	}
	st, exit, _ := strings.Cut(final, "|")
	lines := []string{fmt.Sprintf("%s|%s|%s|n[1-2]|00:01:07", id, st, exit)}
	for i, s := range j.steps {
		st, exit, _ := strings.Cut(s, "|")
		lines = append(lines, fmt.Sprintf("%s.%d|%s|%s|n1|00:01:00", id, i, st, exit))
	}
	return []byte(strings.Join(lines, "\n") + "\n"), nil
}

func (f *fakeSlurm) commands(name string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, name+" ") {
			out = append(out, c)
		}
	}
	return out
}

func jobArg(args []string) string {
	for _, a := range args {
		if id, ok := strings.CutPrefix(a, "--jobs="); ok {
			return id
		}
	}
	return ""
}

// nodeSucceeds is a node host that logs a line and succeeds with outputs.
func nodeSucceeds(node int, outputs map[string]string) func(jobDir string) {
	return func(jobDir string) {
		writeNode(jobDir, node, fmt.Sprintf("hello from node %d", node), func(r *rundir.Result) {
			r.Outputs = ctyStrings(outputs)
		})
	}
}

// nodeFails is a node host whose plugin reported an error.
func nodeFails(node int, summary string) func(jobDir string) {
	return func(jobDir string) {
		writeNode(jobDir, node, "about to fail", func(r *rundir.Result) {
			r.Diagnostics = api.Diagnostics{{Severity: api.Error, Summary: summary, Detail: "it wrote: about to fail"}}
		})
	}
}

// nodeHostFails is a node host that got no answer from its plugin.
func nodeHostFails(node int, msg string) func(jobDir string) {
	return func(jobDir string) {
		writeNode(jobDir, node, "starting", func(r *rundir.Result) { r.Error = msg })
	}
}

func writeNode(jobDir string, node int, line string, fill func(*rundir.Result)) {
	dir := rundir.NodeDir(jobDir, node)
	os.MkdirAll(dir, 0o755)
	w, _ := rundir.CreateEvents(dir, "exec.x")
	w.Send(api.Event{Log: &api.Log{Level: "info", Message: line}})
	w.Close()
	r := &rundir.Result{Node: node, Host: fmt.Sprintf("n%d", node+1)}
	fill(r)
	rundir.WriteResult(dir, r)
}

func allNodes(fns ...func(string)) func(string) {
	return func(jobDir string) {
		for _, fn := range fns {
			fn(jobDir)
		}
	}
}

func nodeOutputPath(runDir, id string, node int) string {
	return filepath.Join(rundir.JobDir(runDir, id), fmt.Sprintf("node-%d.out", node))
}
