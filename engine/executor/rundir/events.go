package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpuflow/gpuflow/engine/runlog"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// EventWriter appends a node's events to its events.jsonl, one whole line
// per write, unbuffered, so the submitting gpuflow sees each one as soon
// as the file system shows it. It is safe for concurrent use.
type EventWriter struct {
	stage string
	mu    sync.Mutex
	f     *os.File
	err   error
}

// CreateEvents creates nodeDir/events.jsonl for stage's events.
func CreateEvents(nodeDir, stage string) (*EventWriter, error) {
	f, err := os.OpenFile(filepath.Join(nodeDir, EventsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &EventWriter{stage: stage, f: f}, nil
}

// Send writes e; the first write error is kept for Close.
func (w *EventWriter) Send(e api.Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	line, err := json.Marshal(runlog.Encode(w.stage, e))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if err == nil {
		_, err = w.f.Write(append(line, '\n'))
	}
	w.err = err
}

// Close closes the file and returns the first error of any write.
func (w *EventWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return errors.Join(w.err, w.f.Close())
}

// Tail reads a node's events.jsonl as it grows.
type Tail struct {
	path    string
	offset  int64
	partial []byte
}

// NewTail follows nodeDir's events; the file need not exist yet.
func NewTail(nodeDir string) *Tail { return &Tail{path: filepath.Join(nodeDir, EventsFile)} }

// Next returns the events written since the last call. A line not yet
// ended waits for the next call; a line that is not an event is skipped.
func (t *Tail) Next() ([]api.Event, error) {
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	t.offset += int64(len(data))
	data = append(t.partial, data...)
	var events []api.Event
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		var j runlog.EventJSON
		if json.Unmarshal(data[:i], &j) == nil {
			if e, ok := decodeEvent(j); ok {
				events = append(events, e)
			}
		}
		data = data[i+1:]
	}
	t.partial = append([]byte(nil), data...)
	return events, nil
}

// decodeEvent is runlog.Encode's inverse.
func decodeEvent(j runlog.EventJSON) (api.Event, bool) {
	e := api.Event{Time: j.Time}
	switch j.Type {
	case runlog.TypeLog:
		e.Log = &api.Log{Level: j.Level, Message: j.Message}
	case runlog.TypeProgress:
		e.Progress = &api.Progress{Label: j.Label, Done: deref(j.Done), Total: deref(j.Total), Unit: j.Unit}
	case runlog.TypeMetric:
		e.Metric = &api.Metric{Name: j.Name, Value: deref(j.Value), Unit: j.Unit, Step: deref(j.Step)}
	case runlog.TypeArtifact:
		e.Artifact = &api.Artifact{Name: j.Name, Path: j.Path, Bytes: deref(j.Bytes), Files: j.Files}
	default:
		return e, false
	}
	return e, true
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
