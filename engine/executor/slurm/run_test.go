package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

func ctyStrings(m map[string]string) map[string]cty.Value {
	out := map[string]cty.Value{}
	for k, v := range m {
		out[k] = cty.StringVal(v)
	}
	return out
}

// events collects what a run sends, as "level: message" for logs.
type events struct {
	mu   sync.Mutex
	logs []string
}

func (e *events) Send(ev api.Event) {
	if ev.Log == nil {
		return
	}
	e.mu.Lock()
	e.logs = append(e.logs, ev.Log.Level+": "+ev.Log.Message)
	e.mu.Unlock()
}

func (e *events) has(sub string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.logs {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

var fastOptions = Options{Executable: "/opt/gpuflow", Poll: 5 * time.Millisecond, Tail: 2 * time.Millisecond, AccountingWait: 100 * time.Millisecond}

// applyThrough runs a stage of job through the fake Slurm in a fresh run
// directory.
func applyThrough(t *testing.T, fs *fakeSlurm, job Job) (*Run, *api.ApplyResponse, *events, string) {
	t.Helper()
	opts := fastOptions
	opts.Runner = fs
	r := NewRun(job, Render(job), opts)
	runDir := t.TempDir()
	ev := &events{}
	resp, err := r.Provider().ApplyStage(context.Background(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: "exec", Name: "x", Config: cty.EmptyObjectVal, WorkDir: "."}, RunDir: runDir}, ev)
	if err != nil {
		t.Fatal(err)
	}
	return r, resp, ev, runDir
}

func summaries(diags api.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary)
	}
	return out
}

var testJob = Job{Stage: "exec.x", Plugin: "exec", Executor: "executor.slurm.test", TimeLimit: time.Minute, Nodes: 1, Retries: 1}

func TestRunOutcomes(t *testing.T) {
	t.Parallel()
	twoNodes := testJob
	twoNodes.Nodes = 2
	noRetries := testJob
	noRetries.Retries = 0
	tests := map[string]struct {
		job       Job
		jobs      []fakeJob
		outputs   map[string]cty.Value
		summaries []string
		inDetail  string
		logs      []string
		submitted int
	}{
		"success": {job: testJob, submitted: 1,
			jobs:    []fakeJob{{states: []string{"PENDING", "RUNNING", "COMPLETED"}, final: "COMPLETED|0:0", nodes: nodeSucceeds(0, map[string]string{"a": "1"})}},
			outputs: ctyStrings(map[string]string{"a": "1"}),
			logs:    []string{"info: submitted Slurm job 100", "pending (Resources)", "running on n[1-2]", "info: hello from node 0"}},
		"two nodes, outputs of the first": {job: twoNodes, submitted: 1,
			jobs: []fakeJob{{states: []string{"RUNNING", "COMPLETED"}, final: "COMPLETED|0:0",
				nodes: allNodes(nodeSucceeds(0, map[string]string{"a": "first"}), nodeSucceeds(1, map[string]string{"a": "second"}))}},
			outputs: ctyStrings(map[string]string{"a": "first"}),
			logs:    []string{"info: [node 0] hello from node 0", "info: [node 1] hello from node 1"}},
		"plugin failure first, then Slurm's": {job: testJob, submitted: 1,
			jobs:      []fakeJob{{states: []string{"RUNNING", "FAILED"}, final: "FAILED|1:0", nodes: nodeFails(0, "Command failed")}},
			summaries: []string{"Command failed", "Slurm job 100 failed"}, inDetail: "exit code 1"},
		"failed before sacct has its exit code": {job: testJob, submitted: 1,
			jobs: []fakeJob{{states: []string{"RUNNING", "FAILED"}, early: []string{"FAILED|0:0", "FAILED|0:0"}, final: "FAILED|1:0",
				nodes: nodeFails(0, "Command failed")}},
			summaries: []string{"Command failed", "Slurm job 100 failed"}, inDetail: "ended with exit code 1"},
		"one of two nodes fails": {job: twoNodes, submitted: 1,
			jobs: []fakeJob{{states: []string{"RUNNING", "FAILED"}, final: "FAILED|1:0",
				nodes: allNodes(nodeSucceeds(0, nil), nodeFails(1, "Command failed"))}},
			summaries: []string{"Command failed", "Slurm job 100 failed"}, inDetail: "On node 1 (n2): it wrote"},
		"time limit": {job: testJob, submitted: 1,
			jobs:      []fakeJob{{states: []string{"RUNNING", "TIMEOUT"}, final: "TIMEOUT|0:0", batchOutput: "slurmstepd: error: *** JOB 100 CANCELLED DUE TO TIME LIMIT ***\n"}},
			summaries: []string{"Slurm job 100 reached its time limit"}, inDetail: "time limit of 1m after 00:01:07"},
		"time limit kills the plugin too": {job: testJob, submitted: 1,
			jobs: []fakeJob{{states: []string{"RUNNING", "TIMEOUT"}, final: "TIMEOUT|0:0",
				nodes: nodeHostFails(0, "plugin exec died during ApplyStage (signal: terminated)")}},
			summaries: []string{"Slurm job 100 reached its time limit"}},
		"node host fails by itself": {job: testJob, submitted: 1,
			jobs: []fakeJob{{states: []string{"RUNNING", "FAILED"}, final: "FAILED|2:0",
				nodes: nodeHostFails(0, "plugin exec did not start on n1: no such plugin")}},
			summaries: []string{"Node host failed", "Slurm job 100 failed"}, inDetail: "no such plugin"},
		"out of memory": {job: testJob, submitted: 1,
			jobs:      []fakeJob{{states: []string{"RUNNING", "FAILED"}, final: "FAILED|0:125", steps: []string{"OUT_OF_MEMORY|0:125"}}},
			summaries: []string{"Slurm job 100 ran out of memory"}, inDetail: "--mem=0"},
		"node failure, then success on the retry": {job: testJob, submitted: 2,
			jobs: []fakeJob{{states: []string{"RUNNING", "NODE_FAIL"}, final: "NODE_FAIL|0:0"},
				{states: []string{"RUNNING", "COMPLETED"}, final: "COMPLETED|0:0", nodes: nodeSucceeds(0, map[string]string{"a": "2"})}},
			outputs: ctyStrings(map[string]string{"a": "2"}),
			logs:    []string{"warn: Slurm job 100 ended in state NODE_FAIL; submitting the stage again (retry 1 of 1)"}},
		"preempted past the retries": {job: testJob, submitted: 2,
			jobs: []fakeJob{{states: []string{"PREEMPTED"}, final: "PREEMPTED|0:0"},
				{states: []string{"RUNNING", "PREEMPTED"}, final: "PREEMPTED|0:0"}},
			summaries: []string{"Slurm job 101 was preempted"}, inDetail: "submitted the stage 2 times"},
		"preempted without retries": {job: noRetries, submitted: 1,
			jobs:      []fakeJob{{states: []string{"PREEMPTED"}, final: "PREEMPTED|0:0"}},
			summaries: []string{"Slurm job 100 was preempted"}},
		"pending for good until cancelled": {job: testJob, submitted: 1,
			jobs:      []fakeJob{{states: []string{"PENDING:PartitionNodeLimit", "CANCELLED"}, final: "CANCELLED by 0|0:0"}},
			summaries: []string{"Slurm job 100 was cancelled"},
			logs:      []string{"warn: Slurm job 100 is pending (PartitionNodeLimit): it asks for more nodes than the partition allows"}},
		"cancelled by someone else": {job: testJob, submitted: 1,
			jobs:      []fakeJob{{states: []string{"RUNNING", "CANCELLED"}, final: "CANCELLED by 1000|0:0"}},
			summaries: []string{"Slurm job 100 was cancelled"}, inDetail: "outside gpuflow"},
		"completed without results": {job: testJob, submitted: 1,
			jobs:      []fakeJob{{states: []string{"RUNNING", "COMPLETED"}, final: "COMPLETED|0:0", batchOutput: "bash: /opt/gpuflow: No such file or directory\n"}},
			summaries: []string{"Slurm job 100 completed without a result"}, inDetail: "/opt/gpuflow: No such file"},
		"aged out of the queue": {job: testJob, submitted: 1,
			jobs:    []fakeJob{{states: []string{"RUNNING", "gone"}, final: "COMPLETED|0:0", nodes: nodeSucceeds(0, nil)}},
			outputs: nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeSlurm(tc.jobs...)
			_, resp, ev, _ := applyThrough(t, fs, tc.job)
			if diff := cmp.Diff(tc.summaries, summaries(resp.Diagnostics)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s\n%v", diff, resp.Diagnostics)
			}
			if tc.inDetail != "" && !anyDetail(resp.Diagnostics, tc.inDetail) {
				t.Errorf("no diagnostic detail contains %q: %v", tc.inDetail, resp.Diagnostics)
			}
			if diff := cmp.Diff(tc.outputs, resp.Outputs, cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) })); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			for _, l := range tc.logs {
				if !ev.has(l) {
					t.Errorf("no log line contains %q; logs: %q", l, ev.logs)
				}
			}
			if got := len(fs.commands("sbatch")); got != tc.submitted {
				t.Errorf("sbatch ran %d times, want %d", got, tc.submitted)
			}
		})
	}
}

func anyDetail(diags api.Diagnostics, sub string) bool {
	for _, d := range diags {
		if strings.Contains(d.Detail, sub) {
			return true
		}
	}
	return false
}

// TestRunWritesWhatItSubmits: the script submitted is the rendered one,
// beside the request, with the run directory and gpuflow as arguments.
func TestRunWritesWhatItSubmits(t *testing.T) {
	t.Parallel()
	fs := newFakeSlurm(fakeJob{states: []string{"COMPLETED"}, final: "COMPLETED|0:0", nodes: nodeSucceeds(0, nil)})
	_, _, _, runDir := applyThrough(t, fs, testJob)
	script, err := os.ReadFile(filepath.Join(runDir, ScriptName))
	if err != nil || string(script) != Render(testJob) {
		t.Errorf("job.sbatch differs from the rendered script (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(runDir, "request.json")); err != nil {
		t.Error(err)
	}
	wd, _ := os.Getwd()
	want := []string{"sbatch --parsable --chdir=" + wd + " --output=" + runDir + "/slurm-%j.out " +
		filepath.Join(runDir, ScriptName) + " " + runDir + " /opt/gpuflow"}
	if diff := cmp.Diff(want, fs.commands("sbatch")); diff != "" {
		t.Errorf("sbatch command (-want +got):\n%s", diff)
	}
}

func TestRunWithoutAccounting(t *testing.T) {
	t.Parallel()
	fs := newFakeSlurm(fakeJob{states: []string{"RUNNING", "TIMEOUT"}})
	fs.noAccounting = true
	_, resp, _, _ := applyThrough(t, fs, testJob)
	if diff := cmp.Diff([]string{"Slurm job 100 reached its time limit"}, summaries(resp.Diagnostics)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

func TestRunSubmitFailures(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		err      error
		inDetail string
	}{
		"refused":   {&CommandError{Name: "sbatch", Stderr: "sbatch: error: invalid partition specified: gpux"}, "invalid partition specified: gpux"},
		"not found": {&CommandError{Name: "sbatch", NotFound: true, Err: errors.New("not found")}, "scripts/slurm/setup.sh"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeSlurm()
			fs.sbatchErr = tc.err
			r, resp, _, _ := applyThrough(t, fs, testJob)
			if diff := cmp.Diff([]string{"Slurm refused the job"}, summaries(resp.Diagnostics)); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
			if !anyDetail(resp.Diagnostics, tc.inDetail) {
				t.Errorf("no detail contains %q: %v", tc.inDetail, resp.Diagnostics)
			}
			if !r.Exited() {
				t.Error("Exited() is false after the run ended")
			}
		})
	}
}

// TestRunStopCancelsTheJob: Stop runs scancel, and the run reports the
// job cancelled by gpuflow once Slurm says it ended, without retrying.
func TestRunStopCancelsTheJob(t *testing.T) {
	t.Parallel()
	fs := newFakeSlurm(fakeJob{states: []string{"RUNNING"}, final: "RUNNING|0:0"}, fakeJob{states: []string{"RUNNING"}})
	opts := fastOptions
	opts.Runner = fs
	r := NewRun(testJob, Render(testJob), opts)
	ev := &events{}
	done := make(chan *api.ApplyResponse)
	go func() {
		resp, _ := r.Provider().ApplyStage(context.Background(), &api.ApplyRequest{
			StageRequest: api.StageRequest{Type: "exec", Name: "x", Config: cty.EmptyObjectVal, WorkDir: "."}, RunDir: t.TempDir()}, ev)
		done <- resp
	}()
	for !ev.has("running on") {
		time.Sleep(time.Millisecond)
	}
	if r.Exited() {
		t.Error("Exited() while the job runs")
	}
	if err := r.Provider().Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	resp := <-done
	if diff := cmp.Diff([]string{"Slurm job 100 cancelled"}, summaries(resp.Diagnostics)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"scancel 100"}, fs.commands("scancel")); diff != "" {
		t.Errorf("scancel (-want +got):\n%s", diff)
	}
	r.Kill() // after the end: nothing more to cancel
	if got := len(fs.commands("scancel")); got != 1 || !r.Exited() {
		t.Errorf("scancel ran %d times after Kill on an ended run (want 1), Exited %v", got, r.Exited())
	}
}

// TestRunKilled: the engine kills a run it gave up on and cancels the
// call; the job is cancelled and the call returns the context's error.
func TestRunKilled(t *testing.T) {
	t.Parallel()
	fs := newFakeSlurm(fakeJob{states: []string{"RUNNING"}, final: "RUNNING|0:0"})
	fs.slowCancel = true
	opts := fastOptions
	opts.Runner = fs
	r := NewRun(testJob, Render(testJob), opts)
	ctx, cancelCall := context.WithCancel(context.Background())
	ev := &events{}
	errc := make(chan error)
	go func() {
		_, err := r.Provider().ApplyStage(ctx, &api.ApplyRequest{
			StageRequest: api.StageRequest{Type: "exec", Name: "x", Config: cty.EmptyObjectVal, WorkDir: "."}, RunDir: t.TempDir()}, ev)
		errc <- err
	}()
	for !ev.has("running on") {
		time.Sleep(time.Millisecond)
	}
	r.Kill()
	cancelCall()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("ApplyStage returned %v, want the context's error", err)
	}
	if diff := cmp.Diff([]string{"scancel 100"}, fs.commands("scancel")); diff != "" {
		t.Errorf("scancel (-want +got):\n%s", diff)
	}
}
