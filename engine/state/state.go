package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// FormatVersion is the state file format this build writes.
const FormatVersion = 1

// Statuses a stage can be recorded with.
const (
	StatusRunning     = "running"
	StatusSucceeded   = "succeeded"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	StatusSkipped     = "skipped"
)

// State is the whole record for one workload.
type State struct {
	FormatVersion int    `json:"format_version"`
	Serial        int64  `json:"serial"`
	Lineage       string `json:"lineage"`
	Workload      string `json:"workload"`
	// Stages is keyed by stage address (TYPE.NAME).
	Stages map[string]*Stage `json:"stages"`
}

// Stage is what the last apply of one stage left behind.
type Stage struct {
	Address   string                     `json:"address"`
	Status    string                     `json:"status"`
	InputHash string                     `json:"input_hash"`
	Plugin    Plugin                     `json:"plugin"`
	Config    json.RawMessage            `json:"config,omitempty"`
	Outputs   map[string]json.RawMessage `json:"outputs,omitempty"`
	Metrics   map[string]Metric          `json:"metrics,omitempty"`
	// Plan is what the plan predicted for a training stage, kept beside
	// the measurement so that summaries and reports can show the error.
	Plan      *Prediction `json:"plan,omitempty"`
	StartedAt time.Time   `json:"started_at,omitzero"`
	EndedAt   time.Time   `json:"ended_at,omitzero"`
	LogPath   string      `json:"log_path,omitempty"`
	Error     string      `json:"error,omitempty"`
	// ClusterJob is the cluster job that runs the stage, recorded once the
	// cluster accepted it, so that a gpuflow started again while it runs
	// follows it instead of submitting another.
	ClusterJob *ClusterJob `json:"cluster_job,omitempty"`
}

// ClusterJob names a job submitted to a cluster.
type ClusterJob struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	// RunDir is the run directory its nodes write into.
	RunDir string `json:"run_dir"`
}

// Plugin identifies the plugin that ran a stage.
type Plugin struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Metric summarises one metric over a run.
type Metric struct {
	Unit  string  `json:"unit,omitempty"`
	Last  float64 `json:"last"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Count int64   `json:"count"`
}

// Prediction is the part of a training stage's estimate that a run
// measures too.
type Prediction struct {
	MemoryBytes int64   `json:"memory_bytes"`
	StepTimeS   float64 `json:"step_time_s"`
	TokensPerS  float64 `json:"tokens_per_s"`
	MFU         float64 `json:"mfu"`
}

// New returns empty state for a workload.
func New(workload, lineage string) *State {
	return &State{FormatVersion: FormatVersion, Lineage: lineage, Workload: workload, Stages: map[string]*Stage{}}
}

// ErrNotExist is returned by Read for a state file that does not exist.
var ErrNotExist = errors.New("no state yet")

// Read loads a state file. It checks format_version first, so a file from a
// newer gpuflow is refused with a message naming the version it needs.
func Read(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("reading state %s: %w", path, err)
	}
	var head struct {
		FormatVersion int `json:"format_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("state %s is not valid JSON (%v); restore it from a backup or move it away to start afresh", path, err)
	}
	if head.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("state %s has format_version %d, but this gpuflow reads version %d; use the gpuflow release that wrote it", path, head.FormatVersion, FormatVersion)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("state %s: %v", path, err)
	}
	if s.Stages == nil {
		s.Stages = map[string]*Stage{}
	}
	return &s, nil
}

// Write saves s to path atomically, bumping its serial: readers see either
// the old file or the new one, never a torn write.
func Write(path string, s *State) error {
	s.Serial++
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it,
// renames it over path and syncs the directory. A file it replaces keeps
// its permissions; a new one is readable by its owner only, since state
// and plans may hold sensitive values.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if old, err := os.Stat(path); err == nil {
		if err := f.Chmod(old.Mode().Perm()); err != nil {
			f.Close()
			return err
		}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
