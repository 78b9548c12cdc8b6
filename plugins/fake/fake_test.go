package fake_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/client"
	"github.com/gpuflow/gpuflow/plugins/fake"
)

func body(attrs map[string]cty.Value) cty.Value {
	full := map[string]cty.Value{
		"behavior":       cty.NullVal(cty.String),
		"duration":       cty.NullVal(cty.String),
		"outputs":        cty.NullVal(cty.Map(cty.String)),
		"gpus":           cty.NullVal(cty.Number),
		"progress_steps": cty.NullVal(cty.Number),
	}
	for k, v := range attrs {
		full[k] = v
	}
	return cty.ObjectVal(full)
}

type recorder struct {
	mu       sync.Mutex
	progress []float64
	metrics  int
	started  chan struct{}
	once     sync.Once
}

func newRecorder() *recorder { return &recorder{started: make(chan struct{})} }

func (r *recorder) Send(e api.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.once.Do(func() { close(r.started) })
	if e.Progress != nil {
		r.progress = append(r.progress, e.Progress.Done/e.Progress.Total)
	}
	if e.Metric != nil {
		r.metrics++
	}
}

func request(attrs map[string]cty.Value) *api.ApplyRequest {
	return &api.ApplyRequest{StageRequest: api.StageRequest{Type: "fake", Name: "f", Config: body(attrs)}}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		attrs map[string]cty.Value
		want  []string // paths of the error diagnostics
	}{
		"defaults":     {nil, nil},
		"bad behavior": {map[string]cty.Value{"behavior": cty.StringVal("explode")}, []string{"behavior"}},
		"bad duration": {map[string]cty.Value{"duration": cty.StringVal("a while")}, []string{"duration"}},
		"bad gpus":     {map[string]cty.Value{"gpus": cty.NumberFloatVal(1.5), "progress_steps": cty.NumberIntVal(-1)}, []string{"gpus", "progress_steps"}},
		"unknown":      {map[string]cty.Value{"behavior": cty.UnknownVal(cty.String)}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags, err := fake.New().ValidateStage(t.Context(), &request(tc.attrs).StageRequest)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range diags {
				got = append(got, d.Path[0].(cty.GetAttrStep).Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("diagnostic paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanClaimsGPUs(t *testing.T) {
	t.Parallel()
	plan, err := fake.New().PlanStage(t.Context(), &request(map[string]cty.Value{
		"gpus": cty.NumberIntVal(4), "duration": cty.StringVal("2s"),
	}).StageRequest)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Claims != (api.Claims{Nodes: 1, GPUsPerNode: 4}) || plan.ExpectedDuration != 2*time.Second {
		t.Errorf("plan = %+v", plan)
	}
}

func TestApplyInProcess(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		behaviour string
		outputs   map[string]cty.Value
		diag      string // summary of the one diagnostic
		err       error
	}{
		"succeed": {fake.Succeed, map[string]cty.Value{"a": cty.StringVal("1"), "b": cty.StringVal("2")}, "", nil},
		"fail":    {fake.Fail, nil, "Fake failure", nil},
		"crash":   {fake.Crash, nil, "", fake.ErrProcessDeath},
		"panic":   {fake.Panic, nil, "", fake.ErrProcessDeath},
		"exit":    {fake.Exit, nil, "", fake.ErrProcessDeath},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder()
			resp, err := fake.New().ApplyStage(t.Context(), request(map[string]cty.Value{
				"behavior":       cty.StringVal(tc.behaviour),
				"duration":       cty.StringVal("40ms"),
				"progress_steps": cty.NumberIntVal(4),
				"outputs":        cty.MapVal(map[string]cty.Value{"a": cty.StringVal("1"), "b": cty.StringVal("2")}),
			}), rec)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff([]float64{0.25, 0.5, 0.75, 1}, rec.progress); diff != "" || rec.metrics != 4 {
				t.Errorf("progress (-want +got):\n%s\nmetrics: %d", diff, rec.metrics)
			}
			if err != nil {
				return
			}
			var diag string
			if len(resp.Diagnostics) == 1 {
				diag = resp.Diagnostics[0].Summary
			}
			if diag != tc.diag || len(resp.Diagnostics) > 1 {
				t.Errorf("diagnostics %+v, want %q", resp.Diagnostics, tc.diag)
			}
			if diff := cmp.Diff(tc.outputs, resp.Outputs, cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) })); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHangEndsOnStopOrCancel(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		end  func(p *fake.Provider, cancel context.CancelFunc)
		want string
	}{
		"stop":   {func(p *fake.Provider, _ context.CancelFunc) { _ = p.Stop(context.Background()) }, "Stage stopped"},
		"cancel": {func(_ *fake.Provider, cancel context.CancelFunc) { cancel() }, "Stage cancelled"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := fake.New()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			rec := newRecorder()
			done := make(chan *api.ApplyResponse)
			go func() {
				resp, _ := p.ApplyStage(ctx, request(map[string]cty.Value{"behavior": cty.StringVal(fake.Hang)}), rec)
				done <- resp
			}()
			<-rec.started
			tc.end(p, cancel)
			resp := <-done
			if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != tc.want {
				t.Errorf("diagnostics %+v, want %q", resp.Diagnostics, tc.want)
			}
		})
	}
}

// TestPluginProcess runs the built plugin binary through the host client.
func TestPluginProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := fake.Build(dir); err != nil {
		t.Fatal(err)
	}
	m, err := client.NewManager(client.Options{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p, err := m.Provider(t.Context(), "fake")
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	resp, err := p.ApplyStage(t.Context(), request(map[string]cty.Value{
		"outputs":        cty.MapVal(map[string]cty.Value{"model": cty.StringVal("ckpt/7")}),
		"progress_steps": cty.NumberIntVal(2),
	}), rec)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Outputs["model"].RawEquals(cty.StringVal("ckpt/7")) || len(rec.progress) != 2 {
		t.Errorf("outputs %#v, progress %v", resp.Outputs, rec.progress)
	}
	_, err = p.ApplyStage(t.Context(), request(map[string]cty.Value{"behavior": cty.StringVal(fake.Panic)}), newRecorder())
	var crash *client.CrashError
	if !errors.As(err, &crash) || crash.Exit != "exit status 2" {
		t.Errorf("got %v, want a crash with exit status 2", err)
	}
}
