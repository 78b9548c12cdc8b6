package state

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteReadRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state", "w.json")
	s := New("w.hcl", "lineage-1")
	s.Stages["exec.a"] = &Stage{Address: "exec.a", Status: StatusSucceeded, InputHash: "sha256:x",
		Plugin: Plugin{Name: "exec", Version: "0.1.0"}}
	if err := Write(path, s); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Serial != 2 {
		t.Errorf("serial = %d after two writes, want 2", got.Serial)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestReadRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		content string
		want    string
	}{
		"newer format": {`{"format_version": 9, "stages": {}}`, "format_version 9, but this gpuflow reads version 1"},
		"not JSON":     {`{"format_version": `, "is not valid JSON"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "s.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Read(filepath.Join(t.TempDir(), "absent.json")); !errors.Is(err, ErrNotExist) {
		t.Errorf("absent state: err = %v, want ErrNotExist", err)
	}
}

func TestLockNamesHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w.lock")
	first, err := Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open files, so a second open in this process
	// contends just as another process would.
	_, err = Acquire(path)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second Acquire: err = %v, want ErrLocked naming PID %d", err, os.Getpid())
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := Acquire(path)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	again.Release()
}

func TestWriteFileAtomicKeepsPermissions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "workload.hcl")
	if err := os.WriteFile(existing, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "plan.json")
	for _, path := range []string{existing, fresh} {
		if err := WriteFileAtomic(path, []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]os.FileMode{}
	for _, path := range []string{existing, fresh} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.Base(path)] = info.Mode().Perm()
	}
	want := map[string]os.FileMode{"workload.hcl": 0o640, "plan.json": 0o600}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("permissions (-want +got):\n%s", diff)
	}
}
