package rundir

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// ctyCmp compares cty values as typed JSON: number precision may differ
// after a round trip, and cty's Equals is unknown where values are null.
var ctyCmp = cmp.Comparer(func(a, b cty.Value) bool {
	ja, erra := ctyjson.SimpleJSONValue{Value: a}.MarshalJSON()
	jb, errb := ctyjson.SimpleJSONValue{Value: b}.MarshalJSON()
	return erra == nil && errb == nil && string(ja) == string(jb)
})

var pathCmp = cmp.Comparer(func(a, b cty.Path) bool { return a.Equals(b) })

func TestRequestRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := &Request{Plugin: "exec", Stage: api.StageRequest{Type: "exec", Name: "x",
		Config: cty.ObjectVal(map[string]cty.Value{
			"command": cty.ListVal([]cty.Value{cty.StringVal("sh"), cty.StringVal("-c")}),
			"env":     cty.NullVal(cty.Map(cty.String)),
			"steps":   cty.NumberIntVal(3),
		}),
		WorkDir: "/shared/work", Env: map[string]string{"NCCL_DEBUG": "WARN"}}}
	if err := WriteRequest(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRequest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, ctyCmp); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestResultRoundTrip(t *testing.T) {
	t.Parallel()
	tests := map[string]*Result{
		"outputs": {Node: 0, Host: "n1", Outputs: map[string]cty.Value{
			"exit_code": cty.NumberIntVal(0), "stdout": cty.StringVal("hi\n")}},
		"diagnostics with paths": {Node: 1, Host: "n2", Diagnostics: api.Diagnostics{
			{Severity: api.Error, Summary: "Command failed", Detail: "exit 3", Path: cty.GetAttrPath("command").IndexInt(2)},
			{Severity: api.Warning, Summary: "w", Path: cty.GetAttrPath("env").IndexString("A")},
			{Severity: api.Error, Summary: "no path"},
		}},
		"error": {Node: 3, Host: "n4", Error: "plugin exec did not start: boom"},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := WriteResult(dir, want); err != nil {
				t.Fatal(err)
			}
			got, err := ReadResult(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, ctyCmp, pathCmp); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTail checks that events come through whole and once, and that a
// line still being written waits for its end.
func TestTail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tail := NewTail(dir)
	if evs, err := tail.Next(); err != nil || len(evs) != 0 {
		t.Fatalf("before the file exists: %v, %v", evs, err)
	}
	w, err := CreateEvents(dir, "exec.x")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sent := []api.Event{
		{Time: at, Log: &api.Log{Level: "info", Message: "hello"}},
		{Time: at, Metric: &api.Metric{Name: "loss", Value: 2.5, Unit: "nats", Step: 7}},
		{Time: at, Progress: &api.Progress{Label: "steps", Done: 1, Total: 10, Unit: "steps"}},
		{Time: at, Artifact: &api.Artifact{Name: "ckpt", Path: "/x/step-1", Bytes: 12, Files: 2}},
	}
	w.Send(sent[0])
	w.Send(sent[1])
	first, err := tail.Next()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, EventsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-01-02T03:04:05Z","type":"log","level":"info","mess`)
	if evs, _ := tail.Next(); len(evs) != 0 {
		t.Errorf("half a line gave events: %v", evs)
	}
	f.WriteString(`age":"joined"}` + "\nnot json\n")
	f.Close()
	joined, _ := tail.Next()
	w.Send(sent[2])
	w.Send(sent[3])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rest, _ := tail.Next()
	got := append(append(first, joined...), rest...)
	want := []api.Event{sent[0], sent[1], {Time: at, Log: &api.Log{Level: "info", Message: "joined"}}, sent[2], sent[3]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
