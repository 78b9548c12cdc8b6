package runlog

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// File names inside a run directory.
const (
	EventsFile = "events.jsonl"
	LogFile    = "log"
)

// Run is the on-disk record of one stage run. Its methods are safe to call
// from several goroutines.
type Run struct {
	// ID names the run: its start time (UTC) and a random suffix, so runs
	// sort by time and never collide.
	ID  string
	Dir string

	mu     sync.Mutex
	stage  string
	events *os.File
	log    *os.File
	eventW *bufio.Writer
	logW   *bufio.Writer
	// flushed is when the buffers were last written out.
	flushed time.Time
	err     error
}

// idTimeLayout is the time at the start of a run ID.
const idTimeLayout = "20060102T150405Z"

// flushEvery bounds how stale the files may be while a stage runs, so a
// crash of gpuflow loses at most this much of a run's record.
const flushEvery = time.Second

// Create makes root/STAGE/RUN-ID/ and opens its files.
func Create(root, stage string, start time.Time) (*Run, error) {
	id, err := newID(start)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, stage, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	events, err := os.Create(filepath.Join(dir, EventsFile))
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, LogFile))
	if err != nil {
		events.Close()
		return nil, err
	}
	return &Run{ID: id, Dir: dir, stage: stage, events: events, log: log,
		eventW: bufio.NewWriter(events), logW: bufio.NewWriter(log), flushed: time.Now()}, nil
}

func newID(start time.Time) (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return start.UTC().Format(idTimeLayout) + "-" + hex.EncodeToString(b[:]), nil
}

// LogPath is the path of the run's plain-text log.
func (r *Run) LogPath() string { return filepath.Join(r.Dir, LogFile) }

// Record appends an event to events.jsonl, and a log event's message to log.
func (r *Run) Record(e api.Event) {
	line, err := json.Marshal(Encode(r.stage, e))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	if err != nil {
		r.err = err
		return
	}
	r.eventW.Write(append(line, '\n'))
	if e.Log != nil {
		r.writeLog(e.Time, e.Log.Level, e.Log.Message)
	}
	if now := time.Now(); now.Sub(r.flushed) >= flushEvery {
		r.flushed = now
		r.flush()
	}
}

// Note writes a line of the engine's own to the log (start, end, errors).
func (r *Run) Note(at time.Time, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeLog(at, "gpuflow", message)
}

// writeLog writes one line per line of message; r.mu is held.
func (r *Run) writeLog(at time.Time, level, message string) {
	stamp := at.UTC().Format(time.RFC3339Nano)
	for _, line := range strings.Split(strings.TrimRight(message, "\n"), "\n") {
		fmt.Fprintf(r.logW, "%s %s %s\n", stamp, level, line)
	}
}

// Flush pushes buffered lines to the files, so that a reader (or a kill)
// finds them there.
func (r *Run) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flush()
}

func (r *Run) flush() error {
	if err := r.eventW.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	if err := r.logW.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	return r.err
}

// Close flushes and closes the run's files, returning the first write error.
func (r *Run) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.flush()
	for _, f := range []*os.File{r.events, r.log} {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// WriteInputs records what the run was given, written whole then renamed;
// readable by its owner only, as state is, since a stage body may hold
// sensitive values.
func (r *Run) WriteInputs(in Inputs) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(r.Dir, "."+InputsFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(r.Dir, InputsFile))
}
