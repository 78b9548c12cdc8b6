package train

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/api"
)

func TestMonitorTurnsLinesIntoEvents(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	metric := func(name string, v float64, unit string) api.Event {
		return api.Event{Time: at, Metric: &api.Metric{Name: name, Value: v, Unit: unit, Step: 3}}
	}
	logged := func(level, msg string) api.Event {
		return api.Event{Time: at, Log: &api.Log{Level: level, Message: msg}}
	}
	tests := map[string]struct {
		stdout, stderr []string
		want           []api.Event
	}{
		"a step is progress and metrics": {
			stdout: []string{`{"event":"step","step":3,"steps":300,"loss":2.5,"lr":0.0006,"tokens_per_s":400000,"mfu":0.41,"memory_bytes":1073741824,"step_time_s":0.16}`},
			want: []api.Event{
				{Time: at, Progress: &api.Progress{Label: "train", Done: 3, Total: 300, Unit: "steps"}},
				metric("loss", 2.5, ""), metric("lr", 0.0006, ""), metric("tokens_per_s", 400000, "tokens/s"),
				metric("mfu", 0.41, ""), metric("memory", 1073741824, "bytes"), metric("step_time", 0.16, "s"),
			},
		},
		"an fp16 step adds its loss scale and the steps skipped": {
			stdout: []string{`{"event":"step","step":3,"steps":300,"loss":2.5,"lr":0.0006,"tokens_per_s":400000,"mfu":0.41,"memory_bytes":1073741824,"step_time_s":0.16,"loss_scale":32768,"skipped_steps":1}`},
			want: []api.Event{
				{Time: at, Progress: &api.Progress{Label: "train", Done: 3, Total: 300, Unit: "steps"}},
				metric("loss", 2.5, ""), metric("lr", 0.0006, ""), metric("tokens_per_s", 400000, "tokens/s"),
				metric("mfu", 0.41, ""), metric("memory", 1073741824, "bytes"), metric("step_time", 0.16, "s"),
				metric("loss_scale", 32768, ""), metric("skipped_steps", 1, ""),
			},
		},
		"a skipped step's overflowed loss is no metric": {
			stdout: []string{`{"event":"step","step":3,"steps":300,"loss":null,"lr":0.0006,"tokens_per_s":400000,"mfu":0.41,"memory_bytes":1073741824,"step_time_s":0.16,"loss_scale":65536,"skipped_steps":1}`},
			want: []api.Event{
				{Time: at, Progress: &api.Progress{Label: "train", Done: 3, Total: 300, Unit: "steps"}},
				metric("lr", 0.0006, ""), metric("tokens_per_s", 400000, "tokens/s"),
				metric("mfu", 0.41, ""), metric("memory", 1073741824, "bytes"), metric("step_time", 0.16, "s"),
				metric("loss_scale", 65536, ""), metric("skipped_steps", 1, ""),
			},
		},
		"a validation is metrics of its step and a log line": {
			stdout: []string{`{"event":"valid","step":3,"steps":300,"valid_loss":2.25,"valid_perplexity":9.4877}`},
			want: []api.Event{metric("valid_loss", 2.25, ""), metric("valid_perplexity", 9.4877, ""),
				logged("info", "validation at step 3: loss 2.25, perplexity 9.488")},
		},
		"torchrun's rank prefix is stripped": {
			stdout: []string{`[rank0]:{"event":"log","level":"warn","message":"resumed"}`, `[default0]: {"event":"log","message":"x"}`},
			want:   []api.Event{logged("warn", "resumed"), logged("info", "x")},
		},
		"other output is logged": {
			stdout: []string{"plain words", "", `{"not":"an event"}`, `{"event": broken`},
			stderr: []string{"W1121 warning", "   "},
			want:   []api.Event{logged("info", "plain words"), logged("info", `{"not":"an event"}`), logged("info", `{"event": broken`), logged("warn", "W1121 warning")},
		},
		"a checkpoint is logged and an artifact": {
			stdout: []string{`{"event":"checkpoint","step":100,"path":"/c/step-00000100"}`},
			want: []api.Event{logged("info", "checkpoint at step 100: /c/step-00000100"),
				{Time: at, Artifact: &api.Artifact{Name: "checkpoint", Path: "/c/step-00000100"}}},
		},
		"an error is logged": {
			stdout: []string{`{"event":"error","summary":"Loss is not finite","detail":"At step 7."}`},
			want:   []api.Event{logged("error", "Loss is not finite: At step 7.")},
		},
		"a result is kept, not sent": {
			stdout: []string{`{"event":"result","result":{"final_loss":2}}`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			m := newMonitor(rec)
			m.now = func() time.Time { return at }
			for _, l := range tc.stdout {
				m.stdoutLine(l)
			}
			for _, l := range tc.stderr {
				m.stderrLine(l)
			}
			if diff := cmp.Diff(tc.want, rec.snapshot()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMonitorRemembersTheRun(t *testing.T) {
	t.Parallel()
	m := newMonitor(&recorder{})
	for _, l := range []string{
		`{"event":"step","step":41,"steps":50,"loss":1}`,
		`{"event":"checkpoint","step":40,"path":"/c/step-00000040"}`,
		`{"event":"error","summary":"S","detail":"D"}`,
		`{"event":"stopped","step":41,"path":"/c/step-00000041"}`,
		`{"event":"result","result":{"checkpoint":"/c/step-00000050","final_loss":0.5,"peak_memory_bytes_per_rank":[3,4],"valid_loss":0.75,"valid_perplexity":2.117}}`,
	} {
		m.stdoutLine(l + "\n")
	}
	for i := range 30 {
		m.stderrLine(string(rune('a' + i%26)))
	}
	if m.lastStep != 41 || m.checkpoint != "/c/step-00000040" || len(m.errors) != 1 || m.stopped == nil || m.stopped.Step != 41 {
		t.Errorf("monitor kept lastStep %d, checkpoint %q, %d errors, stopped %v", m.lastStep, m.checkpoint, len(m.errors), m.stopped)
	}
	validLoss, validPerplexity := 0.75, 2.117
	want := &trainerResult{Checkpoint: "/c/step-00000050", FinalLoss: 0.5, PeakMemoryBytesPerRank: []int64{3, 4},
		ValidLoss: &validLoss, ValidPerplexity: &validPerplexity}
	if diff := cmp.Diff(want, m.result); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if len(m.stderrTail) != stderrTailLines || m.stderrTail[len(m.stderrTail)-1] != "d" {
		t.Errorf("stderr tail = %q, want the last %d lines", m.stderrTail, stderrTailLines)
	}
}

func TestLineWriterSplitsLines(t *testing.T) {
	t.Parallel()
	var got []string
	var raw []byte
	w := &lineWriter{raw: writerFunc(func(p []byte) { raw = append(raw, p...) }), line: func(s string) { got = append(got, s) }}
	for _, chunk := range []string{"one\ntw", "o\n", "thr", "ee"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	w.flush()
	if diff := cmp.Diff([]string{"one", "two", "three"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if string(raw) != "one\ntwo\nthree" {
		t.Errorf("raw copy = %q", raw)
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
