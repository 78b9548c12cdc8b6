package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpuflow/gpuflow/engine/state"
)

// gpuflowBinary builds this command once per test binary run, for tests
// that need a real gpuflow process to kill.
var gpuflowBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "gpuflow-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "gpuflow")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// killWorkload has a quick stage, then one that waits until the file
// "proceed" exists, so the first apply is killed inside it and the second
// completes with the same inputs.
const killWorkload = `
stage "exec" "first" {
  command = ["echo", "first"]
}

stage "exec" "wait" {
  depends_on = [stage.exec.first]
  command    = ["sh", "-c", "while [ ! -f proceed ]; do sleep 0.05; done"]
}

stage "exec" "last" {
  depends_on = [stage.exec.wait]
  command    = ["true"]
}
`

// TestApplyKilledThenResumed kills gpuflow with SIGKILL mid-apply: state
// stays readable and consistent, the lock dies with the process, and the
// next apply finishes the work. A second apply while the first runs is
// refused with the first one's PID.
func TestApplyKilledThenResumed(t *testing.T) {
	t.Parallel()
	bin, err := gpuflowBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(killWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(dir, ".gpuflow", "state", "workload.json")

	first := gpuflowCmd(dir, bin, "apply", "-auto-approve", ".")
	var firstOut bytes.Buffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	running := waitForStatus(t, statePath, "exec.wait", state.StatusRunning)
	if running.Stages["exec.first"].Status != state.StatusSucceeded {
		t.Fatalf("exec.first is %s while exec.wait runs", running.Stages["exec.first"].Status)
	}

	second := gpuflowCmd(dir, bin, "apply", "-auto-approve", ".")
	out, err := second.CombinedOutput()
	if wantPID := fmt.Sprintf("PID %d", first.Process.Pid); err == nil || !strings.Contains(string(out), wantPID) {
		t.Errorf("second apply while the first runs: %v\n%s\nwant a refusal naming %s", err, out, wantPID)
	}

	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()

	after, err := state.Read(statePath)
	if err != nil {
		t.Fatalf("state after SIGKILL: %v\napply said:\n%s", err, firstOut.String())
	}
	got := map[string]string{}
	for addr, s := range after.Stages {
		got[addr] = s.Status
	}
	want := map[string]string{"exec.first": state.StatusSucceeded, "exec.wait": state.StatusRunning}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("state after SIGKILL: %v, want %v", got, want)
	}
	if after.Serial < running.Serial {
		t.Errorf("serial went back from %d to %d", running.Serial, after.Serial)
	}

	if err := os.WriteFile(filepath.Join(dir, "proceed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	resume := gpuflowCmd(dir, bin, "apply", "-auto-approve", ".")
	out, err = resume.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	for _, want := range []string{"stage.exec.first unchanged", "stage.exec.wait succeeded", "stage.exec.last succeeded",
		"Apply finished: 2 succeeded, 1 unchanged, 0 failed"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("resume output lacks %q:\n%s", want, out)
		}
	}
	final, err := state.Read(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if final.Lineage != after.Lineage {
		t.Errorf("lineage changed from %s to %s", after.Lineage, final.Lineage)
	}
}

func gpuflowCmd(dir, bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	return cmd
}

// waitForStatus polls state until stage has status, for up to a minute.
func waitForStatus(t *testing.T, path, stage, status string) *state.State {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		st, err := state.Read(path)
		if err == nil && st.Stages[stage] != nil && st.Stages[stage].Status == status {
			return st
		}
		if err != nil && !errors.Is(err, state.ErrNotExist) {
			t.Fatalf("reading state while apply runs: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never became %s", stage, status)
	return nil
}
