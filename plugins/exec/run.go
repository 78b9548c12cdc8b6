package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// errTimeout is the cause of a context ended by the stage's timeout.
var errTimeout = errors.New("stage timeout reached")

// pipeWait bounds how long a finished command's output is waited for when
// something it left running in the background still holds its pipes.
const pipeWait = time.Second

// run is one execution of a command.
type run struct {
	cfg    config
	req    *api.ApplyRequest
	events api.EventSink
	// grace is how long the command has between SIGTERM and SIGKILL,
	// chosen by why it is being ended.
	grace func(cause error) time.Duration
	// hostGone is closed when the host cancels the call or goes away; it
	// cuts a grace period short.
	hostGone <-chan struct{}

	stdout, stderr *outputSink
	exitCode       int
	signal         string // what killed the command, if a signal did
	startErr       error
}

// execute runs the command to its end or until ctx ends, and returns the
// log files it wrote.
func (r *run) execute(ctx context.Context) ([]*api.Artifact, error) {
	if r.req.RunDir == "" {
		return nil, errors.New("exec: the host gave no run directory")
	}
	if err := os.MkdirAll(r.req.RunDir, 0o755); err != nil {
		return nil, err
	}
	stdoutPath := filepath.Join(r.req.RunDir, "stdout.log")
	stderrPath := filepath.Join(r.req.RunDir, "stderr.log")
	stdoutFile, err := os.Create(stdoutPath)
	if err != nil {
		return nil, err
	}
	defer stdoutFile.Close()
	stderrFile, err := os.Create(stderrPath)
	if err != nil {
		return nil, err
	}
	defer stderrFile.Close()
	r.stdout = &outputSink{file: stdoutFile, events: r.events}
	r.stderr = &outputSink{file: stderrFile, events: r.events}

	r.wait(ctx, r.command())
	r.stdout.flush()
	r.stderr.flush()
	if err := errors.Join(r.stdout.fileErr, r.stderr.fileErr); err != nil {
		return nil, fmt.Errorf("writing the command's output: %w", err)
	}
	return []*api.Artifact{artifact("stdout", stdoutPath), artifact("stderr", stderrPath)}, nil
}

func (r *run) command() *exec.Cmd {
	cmd := exec.Command(r.cfg.Command[0], r.cfg.Command[1:]...)
	cmd.Dir = r.cfg.workDir(r.req.WorkDir)
	cmd.Env = mergeEnv(os.Environ(), r.req.Env, r.cfg.Env)
	cmd.Stdout = r.stdout
	cmd.Stderr = r.stderr
	cmd.WaitDelay = pipeWait
	newGroup(cmd)
	return cmd
}

// wait starts cmd and waits for it, ending its process group if ctx ends
// first.
func (r *run) wait(ctx context.Context, cmd *exec.Cmd) {
	if err := cmd.Start(); err != nil {
		r.startErr = err
		r.exitCode = -1
		return
	}
	exited := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-exited:
		case <-ctx.Done():
			terminate(cmd, r.grace(context.Cause(ctx)), exited, r.hostGone)
		}
	}()
	_ = cmd.Wait() // the exit status is in ProcessState; ErrWaitDelay only means a background process kept the pipes
	close(exited)
	<-stopped
	r.exitCode = cmd.ProcessState.ExitCode()
	r.signal = signalName(cmd.ProcessState)
}

// terminate asks the group to end, then kills it after grace, or sooner
// if the host goes away meanwhile: the plugin process may be killed soon
// after, and the group must not outlive it.
func terminate(cmd *exec.Cmd, grace time.Duration, exited, hostGone <-chan struct{}) {
	signalGroup(cmd, syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-exited:
		return
	case <-timer.C:
	case <-hostGone:
		select {
		case <-exited:
			return
		case <-time.After(cancelGrace):
		}
	}
	signalGroup(cmd, syscall.SIGKILL)
}

// mergeEnv lays the stage's environment over gpuflow's, and the stage
// body's env over both.
func mergeEnv(base []string, layers ...map[string]string) []string {
	env := append([]string(nil), base...)
	for _, layer := range layers {
		for k, v := range layer {
			env = append(env, k+"="+v)
		}
	}
	// os/exec keeps the last value of a duplicated name.
	return env
}

func artifact(name, path string) *api.Artifact {
	a := &api.Artifact{Name: name, Path: path}
	if info, err := os.Stat(path); err == nil {
		a.Bytes = info.Size()
	}
	return a
}

// signalName says what killed a process, or "" if it exited by itself.
func signalName(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}

// stderrExcerpt quotes the last stderr lines for a diagnostic.
func (r *run) stderrExcerpt() string {
	if len(r.stderr.tail) == 0 {
		return " It wrote nothing to stderr."
	}
	return "\nThe last lines of its stderr:\n  " + strings.Join(r.stderr.tail, "\n  ")
}
