package runlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/api"
)

func TestReadEventsRoundTrip(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run, err := Create(root, "pretrain.a", at)
	if err != nil {
		t.Fatal(err)
	}
	for step, loss := range []float64{3, 2.5, 2} {
		run.Record(api.Event{Time: at, Metric: &api.Metric{Name: "loss", Value: loss, Step: int64(step + 1)}})
	}
	run.Record(api.Event{Time: at, Log: &api.Log{Level: "info", Message: "done"}})
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	events, err := ReadEvents(run.Dir)
	if err != nil {
		t.Fatal(err)
	}
	got := MetricSeries(events)
	want := map[string]*Series{"loss": {Name: "loss", Steps: []int64{1, 2, 3}, Values: []float64{3, 2.5, 2}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

func TestReadEventsNamesBadLine(t *testing.T) {
	dir := t.TempDir()
	body := `{"type":"log","message":"ok"}` + "\n" + `{"type":` + "\n"
	if err := os.WriteFile(filepath.Join(dir, EventsFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadEvents(dir)
	if err == nil || !strings.Contains(err.Error(), EventsFile+":2: not an event") {
		t.Errorf("error %v; want one naming line 2", err)
	}
}

// TestListOrdersRunsOfOneSecond: IDs of runs started within one second
// differ only in their random suffix; the log's first line orders them.
func TestListOrdersRunsOfOneSecond(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var want []string
	for i := range 5 {
		start := at.Add(time.Duration(i) * time.Millisecond)
		run, err := Create(root, "exec.a", start)
		if err != nil {
			t.Fatal(err)
		}
		run.Note(start, "started")
		if err := run.Close(); err != nil {
			t.Fatal(err)
		}
		want = append(want, run.ID)
	}
	got, err := List(root, "exec.a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}
