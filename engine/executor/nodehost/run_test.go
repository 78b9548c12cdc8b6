package nodehost

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/fake"
)

// recordingPlugin is the fake plugin, remembering the request it was
// given and whether it was closed.
type recordingPlugin struct {
	*fake.Provider
	mu     sync.Mutex
	req    *api.ApplyRequest
	closed bool
}

func (p *recordingPlugin) ApplyStage(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	p.mu.Lock()
	p.req = req
	p.mu.Unlock()
	return p.Provider.ApplyStage(ctx, req, sink)
}

func (p *recordingPlugin) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

func fakeBody(behavior string) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"behavior":       cty.StringVal(behavior),
		"duration":       cty.NullVal(cty.String),
		"outputs":        cty.MapVal(map[string]cty.Value{"answer": cty.StringVal("42")}),
		"gpus":           cty.NullVal(cty.Number),
		"progress_steps": cty.NullVal(cty.Number),
	})
}

var slurmEnv = []string{"SLURM_JOB_ID=77", "SLURM_NODEID=1", "SLURM_NNODES=2", "SLURMD_NODENAME=n2",
	"GPUFLOW_RDZV_ENDPOINT=10.0.0.1:29500", "GPUFLOW_RDZV_ID=77", "UNRELATED=x"}

// setup writes a request for a fake stage into a fresh run directory.
func setup(t *testing.T, behavior string) string {
	t.Helper()
	runDir := t.TempDir()
	err := rundir.WriteRequest(runDir, &rundir.Request{Plugin: "fake", Stage: api.StageRequest{
		Type: "fake", Name: "f", Config: fakeBody(behavior), WorkDir: "/work", Env: map[string]string{"NCCL_DEBUG": "WARN"}}})
	if err != nil {
		t.Fatal(err)
	}
	return runDir
}

func TestRunWritesResultAndEvents(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		behavior    string
		status      int
		outputs     map[string]cty.Value
		diagSummary string
	}{
		"success": {fake.Succeed, ExitOK, map[string]cty.Value{"answer": cty.StringVal("42")}, ""},
		"failure": {fake.Fail, ExitStageFailed, nil, "Fake failure"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runDir := setup(t, tc.behavior)
			p := &recordingPlugin{Provider: fake.New()}
			var stderr bytes.Buffer
			status := Run(context.Background(), Options{RunDir: runDir, Environ: slurmEnv, Stderr: &stderr,
				Start: func(context.Context, string) (Plugin, error) { return p, nil }})
			if status != tc.status {
				t.Fatalf("status %d, want %d; stderr: %s", status, tc.status, stderr.String())
			}
			nodeDir := rundir.NodeDir(rundir.JobDir(runDir, "77"), 1)
			res, err := rundir.ReadResult(nodeDir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Node != 1 || res.Host != "n2" || res.Error != "" {
				t.Errorf("result node %d host %q error %q, want node 1 on n2 without error", res.Node, res.Host, res.Error)
			}
			if diff := cmp.Diff(tc.outputs, res.Outputs, cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) })); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			if got := summaryOf(res.Diagnostics); got != tc.diagSummary {
				t.Errorf("diagnostic %q, want %q", got, tc.diagSummary)
			}
			events, _ := rundir.NewTail(nodeDir).Next()
			if len(events) == 0 || events[0].Log == nil {
				t.Errorf("events file holds %v, want the plugin's log event first", events)
			}
			wantEnv := map[string]string{"NCCL_DEBUG": "WARN", "GPUFLOW_RDZV_ENDPOINT": "10.0.0.1:29500", "GPUFLOW_RDZV_ID": "77",
				"GPUFLOW_NODE_RANK": "1", "GPUFLOW_NODES": "2", "GPUFLOW_JOB_DIR": filepath.Join(runDir, "job-77"),
				"GPUFLOW_NCCL_ID_FILE": filepath.Join(runDir, "job-77", "nccl-id")}
			if diff := cmp.Diff(wantEnv, p.req.Env); diff != "" {
				t.Errorf("stage env (-want +got):\n%s", diff)
			}
			if p.req.RunDir != nodeDir || !p.closed {
				t.Errorf("plugin ran in %q (want %q), closed %v", p.req.RunDir, nodeDir, p.closed)
			}
		})
	}
}

// TestRunStopsOnSignal: cancelling the context (Slurm's SIGTERM) stops the
// stage, which still reports how it ended.
func TestRunStopsOnSignal(t *testing.T) {
	t.Parallel()
	runDir := setup(t, fake.Hang)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	status := Run(ctx, Options{RunDir: runDir, Environ: slurmEnv, Stderr: &bytes.Buffer{},
		Start: func(context.Context, string) (Plugin, error) { return &recordingPlugin{Provider: fake.New()}, nil }})
	res, err := rundir.ReadResult(rundir.NodeDir(rundir.JobDir(runDir, "77"), 1))
	if err != nil {
		t.Fatal(err)
	}
	if status != ExitStageFailed || summaryOf(res.Diagnostics) != "Stage stopped" {
		t.Errorf("status %d, diagnostics %v; want %d and Stage stopped", status, res.Diagnostics, ExitStageFailed)
	}
}

func TestRunFailures(t *testing.T) {
	t.Parallel()
	started := func(context.Context, string) (Plugin, error) { return &recordingPlugin{Provider: fake.New()}, nil }
	tests := map[string]struct {
		environ    []string
		start      func(context.Context, string) (Plugin, error)
		noRequest  bool
		wantResult string // the result's Error; "" for no result at all
	}{
		"not under srun": {environ: []string{"PATH=/bin"}, start: started},
		"no request":     {environ: slurmEnv, start: started, noRequest: true, wantResult: "request.json: no such file or directory"},
		"plugin does not start": {environ: slurmEnv, wantResult: "plugin fake did not start on n2: no plugin",
			start: func(context.Context, string) (Plugin, error) { return nil, errors.New("no plugin") }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runDir := setup(t, fake.Succeed)
			if tc.noRequest {
				os.Remove(filepath.Join(runDir, rundir.RequestFile))
			}
			var stderr bytes.Buffer
			status := Run(context.Background(), Options{RunDir: runDir, Environ: tc.environ, Start: tc.start, Stderr: &stderr})
			if status != ExitHostFailed || stderr.Len() == 0 {
				t.Errorf("status %d with stderr %q, want %d and a complaint", status, stderr.String(), ExitHostFailed)
			}
			res, err := rundir.ReadResult(rundir.NodeDir(rundir.JobDir(runDir, "77"), 1))
			switch {
			case tc.wantResult == "" && err == nil:
				t.Errorf("wrote a result %+v, want none", res)
			case tc.wantResult != "" && (err != nil || !bytes.Contains([]byte(res.Error), []byte(tc.wantResult))):
				t.Errorf("result %+v (%v), want an error containing %q", res, err, tc.wantResult)
			}
		})
	}
}

func summaryOf(diags api.Diagnostics) string {
	if len(diags) == 0 {
		return ""
	}
	return diags[0].Summary
}
