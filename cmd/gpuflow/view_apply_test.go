package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/plugins/api"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestStageProgressStatus(t *testing.T) {
	t.Parallel()
	progress := func(at time.Duration, label string, done, total float64) api.Event {
		return api.Event{Time: t0.Add(at), Progress: &api.Progress{Label: label, Done: done, Total: total, Unit: "step"}}
	}
	metric := func(name string, v float64) api.Event {
		return api.Event{Time: t0, Metric: &api.Metric{Name: name, Value: v, Unit: ""}}
	}
	tests := map[string]struct {
		events  []api.Event
		status  string
		bar     string
		wantETA time.Duration
	}{
		"nothing yet": {status: "", bar: "            "},
		"log only": {events: []api.Event{{Log: &api.Log{Message: "one\ntwo\n"}}},
			status: "two", bar: "            "},
		"one report has no rate": {events: []api.Event{progress(0, "steps", 10, 100)},
			status: "steps 10/100 step (10%)", bar: "[=         ]"},
		"rate and ETA": {events: []api.Event{progress(0, "steps", 10, 100), progress(2*time.Second, "steps", 30, 100), metric("loss", 2.3456789)},
			status: "steps 30/100 step (30%), 10 step/s, ETA 7.0s, loss=2.346", bar: "[===       ]", wantETA: 7 * time.Second},
		"new label restarts the rate": {events: []api.Event{progress(0, "a", 10, 100), progress(time.Second, "b", 5, 0)},
			status: "b 5 step", bar: "            "},
		"done": {events: []api.Event{progress(0, "x", 1, 2), progress(time.Second, "x", 2, 2)},
			status: "x 2/2 step (100%), 1 step/s", bar: "[==========]"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := newStageProgress("s.x", t0)
			for _, e := range tc.events {
				p.update(e)
			}
			if diff := cmp.Diff(tc.status, p.status()); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.bar, p.bar(10)); diff != "" {
				t.Errorf("bar (-want +got):\n%s", diff)
			}
			eta, ok := p.eta()
			if ok != (tc.wantETA > 0) || eta != tc.wantETA {
				t.Errorf("eta = %v, %v; want %v", eta, ok, tc.wantETA)
			}
		})
	}
}

// plainView is a non-terminal human view with a clock the test moves.
func plainView() (*applyHuman, *bytes.Buffer, *bytes.Buffer, *time.Time) {
	var out, errOut bytes.Buffer
	now := t0
	v := newApplyHuman(&cliEnv{stdout: &out, stderr: &errOut}, false, false)
	v.now = func() time.Time { return now }
	return v, &out, &errOut, &now
}

func TestApplyHumanPlain(t *testing.T) {
	t.Parallel()
	v, out, _, now := plainView()
	sp := &engine.StagePlan{Address: "exec.a", Action: engine.ActionCreate, Plugin: engine.PluginRef{Name: "exec", Version: "1.0"}}
	v.Started(&engine.Plan{Workload: "w", Stages: []*engine.StagePlan{sp}, Summary: engine.PlanSummary{Create: 1}})
	v.StageStarted(sp, *now)
	v.StageEvent("exec.a", api.Event{Time: *now, Log: &api.Log{Level: "warn", Message: "hot"}})
	v.StageEvent("exec.a", api.Event{Time: *now, Progress: &api.Progress{Done: 1, Total: 4}}) // within 5 s: quiet
	*now = now.Add(6 * time.Second)
	v.StageEvent("exec.a", api.Event{Time: *now, Progress: &api.Progress{Done: 2, Total: 4}})
	res := &engine.ApplyResult{Stages: []*engine.StageResult{
		{Address: "exec.a", Outcome: engine.OutcomeSucceeded, StartedAt: t0, EndedAt: t0.Add(6 * time.Second)},
		{Address: "exec.b", Outcome: engine.OutcomeSkipped, Reason: "stage.exec.a failed"},
	}, Outputs: []engine.PlanOutput{{Name: "o", Known: true, Value: []byte(`"x"`)}, {Name: "u"}}}
	v.StageFinished(res.Stages[0])
	v.StageFinished(res.Stages[1])
	v.Finished(res, nil)
	want := `03:04:05 Applying w: 1 to create, 0 to replace, 0 unchanged.
03:04:05 stage.exec.a started (create, plugin exec 1.0)
03:04:05 stage.exec.a: warning: hot
03:04:11 stage.exec.a: 2/4 (50%), 0.1667 units/s, ETA 12.0s
03:04:11 stage.exec.a succeeded after 6.0s
03:04:11 stage.exec.b skipped: stage.exec.a failed

Apply finished: 1 succeeded, 0 unchanged, 0 failed, 0 interrupted, 1 skipped, in 6.0s.
  stage.exec.a  succeeded       6.0s
  stage.exec.b  skipped               stage.exec.a failed

Outputs:
  o = "x"
  u = (not known: a stage it reads did not run)
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestApplyHumanLiveRedraws(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	v := newApplyHuman(&cliEnv{stdout: &out, stderr: &bytes.Buffer{}}, false, true)
	defer v.Close()
	v.now = func() time.Time { return t0.Add(time.Second) }
	v.mu.Lock()
	v.running["exec.a"] = newStageProgress("exec.a", t0)
	v.redraw([]string{"stage.exec.a started"})
	v.redraw([]string{"kept"})
	v.mu.Unlock()
	want := "stage.exec.a started\n  ~ stage.exec.a                          1.0s\n" +
		"\x1b[1A\x1b[Jkept\n  ~ stage.exec.a                          1.0s\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestApplyJSONLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	v := newApplyJSON(&cliEnv{stdout: &out})
	v.now = func() time.Time { return t0 }
	v.StageEvent("exec.a", api.Event{Time: t0, Metric: &api.Metric{Name: "loss", Value: 1.5, Step: 3}})
	v.StageFinished(&engine.StageResult{Address: "exec.a", Outcome: engine.OutcomeFailed, Reason: "boom"})
	v.Error(errors.New("bad"))
	want := `{"name":"loss","stage":"exec.a","step":3,"time":"2026-01-02T03:04:05Z","type":"metric","value":1.5,"version":"1.0"}
{"duration_s":0,"outcome":"failed","reason":"boom","stage":"exec.a","time":"2026-01-02T03:04:05Z","type":"stage_end","version":"1.0"}
{"message":"bad","time":"2026-01-02T03:04:05Z","type":"error","version":"1.0"}
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if strings.Count(out.String(), "\n") != 3 {
		t.Error("want one line per event")
	}
}
