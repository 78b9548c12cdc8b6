package client_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/client"
)

var ctyCmp = cmp.Options{
	cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) }),
	cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) }),
	cmp.Comparer(func(a, b cty.Path) bool { return a.Equals(b) }),
}

func echoPlugin(t *testing.T) *client.Plugin {
	t.Helper()
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "echo")}})
	p, err := m.Provider(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSchemaOverProcess(t *testing.T) {
	t.Parallel()
	got, err := echoPlugin(t).Schema(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(echoSchema, got, ctyCmp); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

func TestValidateAndPlanOverProcess(t *testing.T) {
	t.Parallel()
	p := echoPlugin(t)
	list := cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")})
	req := &api.StageRequest{Type: "echo", Name: "x", Config: cty.ObjectVal(map[string]cty.Value{
		"value": list, "gpus": cty.NullVal(cty.Number), "check": cty.ListValEmpty(cty.EmptyObject),
	})}
	diags, err := p.ValidateStage(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	wantDiags := api.Diagnostics{{Severity: api.Warning, Summary: "Second element", Detail: "It is here.", Path: cty.GetAttrPath("value").IndexInt(1)}}
	if diff := cmp.Diff(wantDiags, diags, ctyCmp); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}

	// At plan time a value can be unknown; it must cross the wire as such.
	req.Config = cty.ObjectVal(map[string]cty.Value{
		"value": cty.UnknownVal(cty.String), "gpus": cty.NumberIntVal(4), "check": cty.ListValEmpty(cty.EmptyObject),
	})
	req.Env = map[string]string{"K": "v"}
	plan, err := p.PlanStage(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := &api.PlanResponse{
		Details:          []api.Detail{{Key: "value", Value: "unknown"}, {Key: "env", Value: "v"}},
		Claims:           api.Claims{Nodes: 1, GPUsPerNode: 4},
		ExpectedDuration: 1500 * time.Millisecond,
	}
	if diff := cmp.Diff(want, plan, ctyCmp); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

// recorder is an EventSink that keeps what it gets.
type recorder struct {
	mu     sync.Mutex
	events []api.Event
	got    chan struct{} // receives once per event, if not nil
}

func (r *recorder) Send(e api.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	if r.got != nil {
		select {
		case r.got <- struct{}{}:
		default:
		}
	}
}

func TestApplyStreamsEventsAndTypedOutputs(t *testing.T) {
	t.Parallel()
	p := echoPlugin(t)
	values := map[string]cty.Value{
		"number": cty.NumberFloatVal(2.5e-3),
		"bool":   cty.True,
		"null":   cty.NullVal(cty.Map(cty.Number)),
		"list":   cty.ListVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(2)}),
		"object": cty.ObjectVal(map[string]cty.Value{
			"tuple": cty.TupleVal([]cty.Value{cty.StringVal("s"), cty.False}),
			"map":   cty.MapVal(map[string]cty.Value{"k": cty.StringVal("v")}),
			"set":   cty.SetVal([]cty.Value{cty.StringVal("only")}),
		}),
	}
	for name, value := range values {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			resp, err := p.ApplyStage(t.Context(), &api.ApplyRequest{
				StageRequest: api.StageRequest{Type: "echo", Name: name, WorkDir: "/w", Config: cty.ObjectVal(map[string]cty.Value{"value": value})},
				RunDir:       "/r",
			}, rec)
			if err != nil {
				t.Fatal(err)
			}
			want := &api.ApplyResponse{
				Outputs:     map[string]cty.Value{"value": value, "where": cty.StringVal("/w|/r")},
				Diagnostics: api.Diagnostics{{Severity: api.Warning, Summary: "Echoed", Path: cty.GetAttrPath("value")}},
			}
			if diff := cmp.Diff(want, resp, ctyCmp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			at := time.Unix(1700000000, 0)
			wantEvents := []api.Event{
				{Time: at, Log: &api.Log{Level: "info", Message: "hello"}},
				{Time: at, Progress: &api.Progress{Label: "work", Done: 1, Total: 2, Unit: "items"}},
				{Time: at, Metric: &api.Metric{Name: "loss", Value: 0.25, Unit: "nats", Step: 10}},
				{Time: at, Artifact: &api.Artifact{Name: "out", Path: "/r/out", Bytes: 42}},
			}
			if diff := cmp.Diff(wantEvents, rec.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// syncBuffer is a log destination safe for go-plugin's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestPluginLogsUnderItsName(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Name: "gpuflow", Level: hclog.Info, Output: &logs})
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "echo")}, Logger: logger})
	p, err := m.Provider(t.Context(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ApplyStage(t.Context(), &api.ApplyRequest{StageRequest: api.StageRequest{
		Name: "logged", Config: cty.ObjectVal(map[string]cty.Value{"value": cty.True}),
	}}, &recorder{}); err != nil {
		t.Fatal(err)
	}
	want := "[INFO]  gpuflow.plugin.echo: echo applying: stage=logged"
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("logs lack %q:\n%s", want, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(logs.String(), "plugin address") {
		t.Errorf("debug lines passed an info-level logger:\n%s", logs.String())
	}
}

func fakeRequest(name, behaviour string) *api.ApplyRequest {
	return &api.ApplyRequest{StageRequest: api.StageRequest{Type: "fake", Name: name, Config: cty.ObjectVal(map[string]cty.Value{
		"behavior": cty.StringVal(behaviour),
	})}}
}

func TestCrashReportsLastStderrLines(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		exit   string
		stderr string // a line the report must hold
	}{
		"crash": {"exit status 2", "[ERROR] fake plugin crashing as asked"},
		"panic": {"exit status 2", "panic: runtime error: invalid memory address or nil pointer dereference"},
		"exit":  {"exit status 0", ""},
	}
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "fake")}})
	for behaviour, tc := range tests {
		t.Run(behaviour, func(t *testing.T) {
			t.Parallel()
			p, err := m.Start(t.Context(), "fake")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			_, err = p.ApplyStage(t.Context(), fakeRequest("doomed", behaviour), &recorder{})
			var crash *client.CrashError
			if !errors.As(err, &crash) {
				t.Fatalf("got %v, want a CrashError", err)
			}
			if crash.Plugin != "fake" || crash.During != "ApplyStage" || crash.Exit != tc.exit {
				t.Errorf("crash = %+v", crash)
			}
			if tc.stderr != "" && (len(crash.Stderr) == 0 || crash.Stderr[0] != tc.stderr) {
				t.Errorf("stderr tail does not start with %q:\n%s", tc.stderr, strings.Join(crash.Stderr, "\n"))
			}
			if !strings.Contains(err.Error(), tc.exit) || !strings.Contains(err.Error(), tc.stderr) {
				t.Errorf("message lacks the exit or stderr: %s", err)
			}
		})
	}
}

func TestStopEndsHangingApply(t *testing.T) {
	t.Parallel()
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "fake")}})
	p, err := m.Provider(t.Context(), "fake")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{got: make(chan struct{}, 1)}
	type result struct {
		resp *api.ApplyResponse
		err  error
	}
	done := make(chan result)
	go func() {
		resp, err := p.ApplyStage(t.Context(), fakeRequest("stuck", "hang"), rec)
		done <- result{resp, err}
	}()
	select {
	case <-rec.got: // the stage is running
	case r := <-done:
		t.Fatalf("apply ended before it was stopped: %+v", r)
	}
	if err := p.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.resp.Diagnostics) != 1 || r.resp.Diagnostics[0].Summary != "Stage stopped" {
		t.Errorf("diagnostics = %+v", r.resp.Diagnostics)
	}
}

func TestCancelEndsHangingApply(t *testing.T) {
	t.Parallel()
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "fake")}})
	p, err := m.Provider(t.Context(), "fake")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rec := &recorder{got: make(chan struct{}, 1)}
	go func() {
		select {
		case <-rec.got:
		case <-ctx.Done():
		}
		cancel()
	}()
	_, err = p.ApplyStage(ctx, fakeRequest("stuck", "hang"), rec)
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	// The process survives a cancelled call.
	if _, err := p.ApplyStage(t.Context(), fakeRequest("after", "succeed"), &recorder{}); err != nil {
		t.Errorf("apply after cancel: %v", err)
	}
}

func TestHandshakeFailures(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"future":   {`plugin "future"`, "speaks no protocol version this gpuflow speaks (1)", "Plugin version: 2"},
		"stranger": {`plugin "stranger"`, "died during start-up (exit status 1)", "This binary is a plugin."},
	}
	m := newManager(t, client.Options{Dirs: []string{pluginDir(t, "future", "stranger")}})
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := m.Start(t.Context(), name)
			if err == nil {
				t.Fatal("started")
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}

func TestBuiltinRunsAsReexecutedBinary(t *testing.T) {
	t.Parallel()
	m := newManager(t, client.Options{Builtins: []string{"exec"}})
	p, err := m.Provider(t.Context(), "exec")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.ApplyStage(t.Context(), &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: "exec", Name: "hi", WorkDir: t.TempDir(), Config: cty.ObjectVal(map[string]cty.Value{
			"command": cty.ListVal([]cty.Value{cty.StringVal("echo"), cty.StringVal("hi there")}),
			"env":     cty.NullVal(cty.Map(cty.String)),
			"dir":     cty.NullVal(cty.String),
			"timeout": cty.NullVal(cty.String),
		})},
		RunDir: t.TempDir(),
	}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]cty.Value{"exit_code": cty.NumberIntVal(0), "stdout_tail": cty.StringVal("hi there")}
	if diff := cmp.Diff(want, resp.Outputs, ctyCmp); diff != "" || resp.Diagnostics != nil {
		t.Errorf("outputs (-want +got):\n%s\ndiagnostics: %v", diff, resp.Diagnostics)
	}
}
