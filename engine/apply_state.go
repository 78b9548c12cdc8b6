package engine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/gpuflow/gpuflow/engine/state"
)

// RunsDir is where run records go: .gpuflow/runs under the working
// directory.
const RunsDir = DataDir + "/runs"

// StateFile is a workload's state held under its lock for the length of an
// apply (or a state rm). Its methods are safe for concurrent use.
type StateFile struct {
	Path     string
	workload string
	lock     *state.Lock

	mu    sync.Mutex
	state *state.State // nil until the first write when there was no file
}

// OpenState takes the lock beside path (DefaultLockPath), then reads the state (none yet is
// fine). A lock held by another process fails with state.ErrLocked and the
// holder's PID.
func OpenState(path, workload string) (*StateFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	lock, err := state.Acquire(DefaultLockPath(path))
	if err != nil {
		return nil, err
	}
	st, err := state.Read(path)
	if errors.Is(err, state.ErrNotExist) {
		st, err = nil, nil
	}
	if err != nil {
		lock.Release()
		return nil, err
	}
	return &StateFile{Path: path, workload: workload, lock: lock, state: st}, nil
}

// Snapshot returns a deep copy of the state as it is now, or nil when none
// was ever written.
func (f *StateFile) Snapshot() *state.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state == nil {
		return nil
	}
	c := *f.state
	c.Stages = make(map[string]*state.Stage, len(f.state.Stages))
	for k, v := range f.state.Stages {
		s := *v
		c.Stages[k] = &s
	}
	return &c
}

// Update changes the state with change and writes it out atomically,
// creating the state (with a fresh lineage) on first use.
func (f *StateFile) Update(change func(*state.State)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state == nil {
		lineage, err := newLineage()
		if err != nil {
			return err
		}
		f.state = state.New(f.workload, lineage)
	}
	change(f.state)
	return state.Write(f.Path, f.state)
}

// Close releases the lock.
func (f *StateFile) Close() error { return f.lock.Release() }

func newLineage() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
