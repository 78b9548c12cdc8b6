package state

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock is an exclusive advisory lock on a workload's state, held by one
// process; the kernel drops it if the process dies, so a killed apply never
// leaves a stale lock behind.
type Lock struct {
	f *os.File
}

// ErrLocked is wrapped by Acquire when another process holds the lock.
var ErrLocked = errors.New("state is locked")

// Acquire takes the lock at path without waiting. When another process
// holds it, the error names that process's PID.
func Acquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		f.Close()
		return nil, fmt.Errorf("%w: another gpuflow (PID %s) is applying this workload; wait for it to finish or stop it, then try again", ErrLocked, holder)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		f.Sync()
	}
	return &Lock{f: f}, nil
}

func readHolder(f *os.File) string {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	if pid := strings.TrimSpace(string(buf[:n])); pid != "" {
		return pid
	}
	return "unknown"
}

// Release drops the lock.
func (l *Lock) Release() error {
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	return l.f.Close()
}
