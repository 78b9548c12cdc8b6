package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/state"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/client"
	"github.com/gpuflow/gpuflow/plugins/fake"
)

// fakePluginDir holds the fake plugin executable, built once per test run.
var fakePluginDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "gpuflow-fake-plugin-")
	if err != nil {
		return "", err
	}
	_, err = fake.Build(dir)
	return dir, err
})

// applyProcesses plans and applies src with the fake plugin running as
// real processes, one per stage.
func applyProcesses(t *testing.T, ctx context.Context, src string, opts engine.ApplyOptions) (*engine.ApplyResult, *state.State) {
	t.Helper()
	pluginDir, err := fakePluginDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := client.NewManager(client.Options{Dirs: []string{pluginDir}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	planning, err := m.Provider(context.Background(), "fake")
	if err != nil {
		t.Fatal(err)
	}
	plugins, err := engine.NewPluginSet(context.Background(), planning)
	if err != nil {
		t.Fatal(err)
	}
	w, diags := engine.LoadWorkload(dir, dsl.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	plan, diags := engine.BuildPlan(context.Background(), w, engine.PlanOptions{Plugins: plugins})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	statePath := filepath.Join(dir, "state.json")
	sf, err := engine.OpenState(statePath, w.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	opts.Plugins, opts.Launcher, opts.State, opts.RunsDir = plugins, engine.ClientLauncher(m), sf, filepath.Join(dir, "runs")
	res, diags := engine.Apply(ctx, plan, w, opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	st, err := state.Read(statePath)
	if err != nil {
		t.Fatal(err)
	}
	return res, st
}

func TestApplyPluginProcesses(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		body       string
		timeout    time.Duration
		want       string
		wantDetail string // in the stage's diagnostics
		wantState  string
	}{
		"succeed": {body: `outputs = { x = "1" }`, want: "succeeded", wantState: state.StatusSucceeded},
		"fail": {body: `behavior = "fail"`, want: "failed: Fake failure",
			wantDetail: `failed because its behavior is "fail"`, wantState: state.StatusFailed},
		"crash": {body: `behavior = "crash"`, want: "failed: plugin fake exited unexpectedly",
			wantDetail: "fake plugin crashing as asked", wantState: state.StatusFailed},
		"panic": {body: `behavior = "panic"`, want: "failed: plugin fake exited unexpectedly",
			wantDetail: "nil pointer dereference", wantState: state.StatusFailed},
		"exit": {body: `behavior = "exit"`, want: "failed: plugin fake exited unexpectedly",
			wantState: state.StatusFailed},
		"timeout": {body: `behavior = "hang"`, timeout: 200 * time.Millisecond, want: "failed: it ran past the stage timeout of 200ms and was stopped",
			wantState: state.StatusFailed},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := `stage "fake" "x" {
  ` + tc.body + `
}
stage "fake" "bystander" {
  duration = "100ms"
}
`
			res, st := applyProcesses(t, context.Background(), src, engine.ApplyOptions{StageTimeout: tc.timeout, StopGrace: 5 * time.Second})
			want := map[string]string{"fake.x": tc.want, "fake.bystander": "succeeded"}
			if diff := cmp.Diff(want, outcomes(res)); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			if got := st.Stages["fake.x"].Status; got != tc.wantState {
				t.Errorf("state says %s, want %s", got, tc.wantState)
			}
			var details []string
			for _, d := range stageResult(res, "fake.x").Diagnostics {
				details = append(details, d.Detail)
			}
			if !strings.Contains(strings.Join(details, "\n"), tc.wantDetail) {
				t.Errorf("diagnostics %q lack %q", details, tc.wantDetail)
			}
		})
	}
}

func TestApplyPluginProcessCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	// The plugin's first event comes after it began tracking Stop.
	obs := &firstEventObserver{first: make(chan string, 16)}
	go func() {
		<-obs.first
		cancel()
	}()
	res, st := applyProcesses(t, ctx, `stage "fake" "x" {
  behavior = "hang"
}
`, engine.ApplyOptions{Observer: obs, StopGrace: 5 * time.Second})
	if diff := cmp.Diff(map[string]string{"fake.x": "interrupted: the apply was interrupted and the stage stopped"}, outcomes(res)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if st.Stages["fake.x"].Status != state.StatusInterrupted {
		t.Errorf("state says %s", st.Stages["fake.x"].Status)
	}
	var summaries []string
	for _, d := range res.Stages[0].Diagnostics {
		summaries = append(summaries, d.Summary)
	}
	if diff := cmp.Diff([]string{"Stage stopped"}, summaries); diff != "" {
		t.Errorf("the plugin should have ended on Stop, within the grace (-want +got):\n%s", diff)
	}
}

func stageResult(res *engine.ApplyResult, addr string) *engine.StageResult {
	for _, r := range res.Stages {
		if r.Address == addr {
			return r
		}
	}
	return &engine.StageResult{}
}

// firstEventObserver reports the stage of each event, dropping those no
// one waits for.
type firstEventObserver struct {
	first chan string
}

func (o *firstEventObserver) StageStarted(*engine.StagePlan, time.Time) {}
func (o *firstEventObserver) StageFinished(*engine.StageResult)         {}
func (o *firstEventObserver) StageEvent(addr string, _ api.Event) {
	select {
	case o.first <- addr:
	default:
	}
}
