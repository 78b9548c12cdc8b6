package runlog

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/api"
)

func TestRunRecordsEventsAndLog(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	start := time.Date(2025, 11, 21, 19, 0, 0, 0, time.UTC)
	r, err := Create(root, "exec.hello", start)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ID, "20251121T190000Z-") {
		t.Errorf("ID %q does not start with the start time", r.ID)
	}
	at := start.Add(time.Second)
	r.Record(api.Event{Time: at, Log: &api.Log{Level: "info", Message: "one\ntwo"}})
	r.Record(api.Event{Time: at, Progress: &api.Progress{Label: "steps", Done: 3, Total: 10, Unit: "step"}})
	r.Record(api.Event{Time: at, Metric: &api.Metric{Name: "loss", Value: 2.5, Step: 7}})
	r.Note(at, "stage ended")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	log, err := os.ReadFile(r.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	wantLog := "2025-11-21T19:00:01Z info one\n2025-11-21T19:00:01Z info two\n2025-11-21T19:00:01Z gpuflow stage ended\n"
	if diff := cmp.Diff(wantLog, string(log)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}

	f, err := os.Open(filepath.Join(r.Dir, EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var types []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var e EventJSON
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		types = append(types, e.Type)
	}
	if diff := cmp.Diff([]string{TypeLog, TypeProgress, TypeMetric}, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := map[string]struct {
		event api.Event
		want  string
	}{
		"log": {api.Event{Time: at, Log: &api.Log{Level: "warn", Message: "hot"}},
			`{"time":"2025-01-02T03:04:05Z","stage":"s.x","type":"log","level":"warn","message":"hot"}`},
		"progress unknown total": {api.Event{Time: at, Progress: &api.Progress{Label: "read", Done: 0, Unit: "B"}},
			`{"time":"2025-01-02T03:04:05Z","stage":"s.x","type":"progress","label":"read","done":0,"unit":"B"}`},
		"metric": {api.Event{Time: at, Metric: &api.Metric{Name: "tflops", Value: 900, Unit: "TFLOP/s"}},
			`{"time":"2025-01-02T03:04:05Z","stage":"s.x","type":"metric","unit":"TFLOP/s","name":"tflops","value":900,"step":0}`},
		"artifact": {api.Event{Time: at, Artifact: &api.Artifact{Name: "ckpt", Path: "/x", Bytes: 12}},
			`{"time":"2025-01-02T03:04:05Z","stage":"s.x","type":"artifact","name":"ckpt","path":"/x","bytes":12}`},
		"folder artifact": {api.Event{Time: at, Artifact: &api.Artifact{Name: "ckpt", Path: "/x", Bytes: 12, Files: 2}},
			`{"time":"2025-01-02T03:04:05Z","stage":"s.x","type":"artifact","name":"ckpt","path":"/x","bytes":12,"files":2}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(Encode("s.x", tc.event))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
