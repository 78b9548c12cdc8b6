package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/state"
)

// These tests apply workloads of exec stages through a real Slurm, the
// one scripts/slurm/setup.sh starts on this machine (CI runs it first).
// The run directories are under t.TempDir(), which the nodes share with
// the test because they are on this same host.

// requireSlurm skips the test when no Slurm answers here, or fails it
// when GPUFLOW_REQUIRE_SLURM=1 (CI, which always has one). It returns the
// number of nodes up (idle, or running other tests' jobs).
func requireSlurm(t *testing.T) int {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("GPUFLOW_REQUIRE_SLURM") == "1" {
		fail = t.Fatalf
	}
	if _, err := exec.LookPath("sinfo"); err != nil {
		fail("Slurm is not installed here (no sinfo on $PATH); run `sudo scripts/slurm/setup.sh` to start a one-host test cluster")
		return 0
	}
	out, err := exec.Command("sinfo", "--noheader", "--Node", "--format=%t").Output()
	up := 0
	for _, st := range strings.Fields(string(out)) {
		if st == "idle" || st == "mix" || st == "alloc" || st == "comp" {
			up++
		}
	}
	if err != nil || up == 0 {
		fail("Slurm has no node up (sinfo: %v, %q); run `sudo scripts/slurm/setup.sh` to start the test cluster", err, out)
	}
	return up
}

// slurmApply runs `gpuflow apply -auto-approve .` in dir with the built
// binary, and returns its exit status and output.
func slurmApply(t *testing.T, dir string) (int, string) {
	t.Helper()
	bin, err := gpuflowBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := gpuflowCmd(dir, bin, "apply", "-auto-approve", ".")
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

func writeWorkload(t *testing.T, dir, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantOutput fails the test for each pattern the output lacks.
func wantOutput(t *testing.T, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", p, out)
		}
	}
}

var submittedJob = regexp.MustCompile(`submitted Slurm job (\d+)`)

// jobIDs are the Slurm jobs an apply's output says it submitted.
func jobIDs(out string) []string {
	var ids []string
	for _, m := range submittedJob.FindAllStringSubmatch(out, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// sacctState is the job's state as Slurm's accounting recorded it, waiting
// up to half a minute for the record to show the job ended.
func sacctState(t *testing.T, id string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command("sacct", "--noheader", "--parsable2", "--allocations", "--jobs="+id, "--format=State").Output()
		state := strings.Fields(strings.TrimSpace(string(out)) + " ")
		if err == nil && len(state) > 0 && state[0] != "RUNNING" && state[0] != "PENDING" || time.Now().After(deadline) {
			if len(state) == 0 {
				return ""
			}
			return state[0]
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const slurmSuccessWorkload = `
executor "slurm" "one" {
  time_limit = "5m"
}

executor "slurm" "two" {
  nodes = 2
}

stage "exec" "remote" {
  executor = executor.slurm.one
  command  = ["sh", "-c", "echo ran on $SLURMD_NODENAME as rank $GPUFLOW_NODE_RANK"]
}

stage "exec" "local" {
  command = ["echo", "downstream got: ${stage.exec.remote.outputs.stdout_tail}"]
}
`

const slurmTwoNodeStage = `
stage "exec" "both" {
  executor = executor.slurm.two
  command  = ["sh", "-c", "echo rank $GPUFLOW_NODE_RANK of $GPUFLOW_NODES, rendezvous at $GPUFLOW_RDZV_ENDPOINT"]
}
`

// TestSlurmApplySucceeds runs a stage as a Slurm job, passes its output to
// a local stage, and, on a cluster of two nodes, runs a stage on both.
func TestSlurmApplySucceeds(t *testing.T) {
	t.Parallel()
	nodes := requireSlurm(t)
	dir := t.TempDir()
	src := slurmSuccessWorkload
	if nodes >= 2 {
		src += slurmTwoNodeStage
	}
	writeWorkload(t, dir, src)
	code, out := slurmApply(t, dir)
	if code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	wantOutput(t, out, `stage\.exec\.remote: ran on \S+ as rank 0`, `stage\.exec\.remote succeeded`,
		`stage\.exec\.local: downstream got: ran on \S+ as rank 0`, `stage\.exec\.local succeeded`)
	if nodes >= 2 {
		wantOutput(t, out, `stage\.exec\.both: \[node 0\] rank 0 of 2, rendezvous at \S+:29500`,
			`stage\.exec\.both: \[node 1\] rank 1 of 2`, `stage\.exec\.both succeeded`)
	}
	for _, id := range jobIDs(out) {
		if got := sacctState(t, id); got != "COMPLETED" {
			t.Errorf("sacct says job %s is %s, want COMPLETED", id, got)
		}
	}
}

const slurmFailingWorkload = `
executor "slurm" "one" {}

stage "exec" "broken" {
  executor = executor.slurm.one
  command  = ["sh", "-c", "echo about to fail >&2; exit 3"]
}

stage "exec" "after" {
  depends_on = [stage.exec.broken]
  executor   = executor.slurm.one
  command    = ["true"]
}

stage "exec" "other" {
  executor = executor.slurm.one
  command  = ["true"]
}
`

// TestSlurmApplyFailureThenResume: a command that fails in its job fails
// its stage with the job's stderr shown and skips its dependents; once
// fixed, the next apply runs only what did not succeed.
func TestSlurmApplyFailureThenResume(t *testing.T) {
	t.Parallel()
	requireSlurm(t)
	dir := t.TempDir()
	writeWorkload(t, dir, slurmFailingWorkload)
	code, out := slurmApply(t, dir)
	if code != 1 {
		t.Fatalf("apply exited %d, want 1:\n%s", code, out)
	}
	wantOutput(t, out, `stage\.exec\.broken failed after .*: Command failed`, `exited with status 3`,
		`The last lines of its stderr:\s+about to fail`, `Error: Slurm job \d+ failed`, `ended with exit code 1`,
		`stage\.exec\.after skipped: stage\.exec\.broken failed`, `stage\.exec\.other succeeded`)

	writeWorkload(t, dir, strings.Replace(slurmFailingWorkload, "echo about to fail >&2; exit 3", "echo fixed", 1))
	code, out = slurmApply(t, dir)
	if code != 0 {
		t.Fatalf("second apply exited %d:\n%s", code, out)
	}
	wantOutput(t, out, `stage\.exec\.broken succeeded`, `stage\.exec\.after succeeded`, `stage\.exec\.other unchanged`)
	if got := len(jobIDs(out)); got != 2 {
		t.Errorf("the second apply submitted %d jobs, want 2 (broken and after):\n%s", got, out)
	}
}

// TestSlurmApplyInterruptCancelsJob: Ctrl-C during a stage's job cancels
// the job (scancel, which accounting records) and records the stage as
// interrupted.
func TestSlurmApplyInterruptCancelsJob(t *testing.T) {
	t.Parallel()
	requireSlurm(t)
	bin, err := gpuflowBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeWorkload(t, dir, `
executor "slurm" "one" {}

stage "exec" "long" {
  executor = executor.slurm.one
  command  = ["sleep", "300"]
}
`)
	cmd := gpuflowCmd(dir, bin, "apply", "-auto-approve", ".")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a failed test leaves no job behind
		for _, id := range jobIDs(out.String()) {
			exec.Command("scancel", id).Run()
		}
	})
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "is running on") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the job never ran:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("apply exited %d (%v) after Ctrl-C, want 1:\n%s", code, err, out.String())
	}
	wantOutput(t, out.String(), `stage\.exec\.long interrupted`)
	ids := jobIDs(out.String())
	if len(ids) != 1 {
		t.Fatalf("submitted jobs %v, want one:\n%s", ids, out.String())
	}
	if got := sacctState(t, ids[0]); got != "CANCELLED" {
		t.Errorf("sacct says job %s is %s, want CANCELLED", ids[0], got)
	}
	st, err := state.Read(filepath.Join(dir, engine.DefaultStatePath(".")))
	if err != nil {
		t.Fatal(err)
	}
	if st.Stages["exec.long"].Status != state.StatusInterrupted {
		t.Errorf("state records exec.long as %s, want %s", st.Stages["exec.long"].Status, state.StatusInterrupted)
	}
}

// TestSlurmApplyTimeLimit: a job that outlives its executor's time_limit
// is ended by Slurm, and the stage fails saying so. Slurm enforces limits
// in whole minutes, so this takes a little over one.
func TestSlurmApplyTimeLimit(t *testing.T) {
	t.Parallel()
	requireSlurm(t)
	dir := t.TempDir()
	writeWorkload(t, dir, `
executor "slurm" "short" {
  time_limit = "1m"
}

stage "exec" "slow" {
  executor = executor.slurm.short
  command  = ["sleep", "600"]
}
`)
	code, out := slurmApply(t, dir)
	if code != 1 {
		t.Fatalf("apply exited %d, want 1:\n%s", code, out)
	}
	wantOutput(t, out, `stage\.exec\.slow failed after .*: Slurm job \d+ reached its time limit`,
		`time limit of 1m after`, `Raise time_limit in executor\.slurm\.short`)
	if strings.Contains(out, "Node host failed") {
		t.Errorf("the node host's death at the time limit is reported as a failure of its own:\n%s", out)
	}
	for _, id := range jobIDs(out) {
		if got := sacctState(t, id); got != "TIMEOUT" {
			t.Errorf("sacct says job %s is %s, want TIMEOUT", id, got)
		}
	}
}

// syncBuffer is a bytes.Buffer safe to write from a process's output
// copier while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
