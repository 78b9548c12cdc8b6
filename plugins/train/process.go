package train

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// pipeWait bounds how long a finished launcher's output is waited for when
// a process it left behind still holds its pipes.
const pipeWait = 2 * time.Second

// exitStatus is how the launcher ended.
type exitStatus struct {
	Code   int
	Signal string
}

// runLauncher runs argv with env in its own process group until it ends,
// or until ctx ends: then the group gets SIGTERM (the trainer saves a
// checkpoint at the end of its current step and exits) and, after
// grace(cause), SIGKILL. stdout and stderr go, line by line, to the
// monitor and, raw, to stdout.log and stderr.log in logDir.
func runLauncher(ctx context.Context, argv, env []string, dir, logDir string, mon *monitor, grace func(error) time.Duration) (exitStatus, error) {
	stdoutLog, stderrLog, err := createLogs(logDir)
	if err != nil {
		return exitStatus{}, err
	}
	defer stdoutLog.Close()
	defer stderrLog.Close()
	stdout := &lineWriter{raw: stdoutLog, line: mon.stdoutLine}
	stderr := &lineWriter{raw: stderrLog, line: mon.stderrLine}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.WaitDelay = env, dir, stdout, stderr, pipeWait
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return exitStatus{}, err
	}
	exited := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-exited:
		case <-ctx.Done():
			terminate(cmd, grace(context.Cause(ctx)), exited)
		}
	}()
	waitErr := cmd.Wait()
	close(exited)
	<-stopped
	signalGroup(cmd, syscall.SIGKILL) // whatever the launcher left behind goes with it
	stdout.flush()
	stderr.flush()
	if errors.Is(waitErr, exec.ErrWaitDelay) {
		waitErr = nil
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return exitStatus{}, waitErr
	}
	return exitStatus{Code: cmd.ProcessState.ExitCode(), Signal: signalName(cmd.ProcessState)}, nil
}

func createLogs(dir string) (*os.File, *os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	out, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		return nil, nil, err
	}
	errf, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		out.Close()
		return nil, nil, err
	}
	return out, errf, nil
}

// terminate asks the group to end, then kills it after grace.
func terminate(cmd *exec.Cmd, grace time.Duration, exited <-chan struct{}) {
	signalGroup(cmd, syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		signalGroup(cmd, syscall.SIGKILL)
	}
}

// ownGroup puts the launcher at the head of a process group of its own,
// so that its workers are signalled with it, and has the kernel send it
// SIGTERM if the plugin process dies first (torchrun passes that on to
// the workers, which checkpoint and exit).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// signalGroup signals the launcher's whole group; its pid is the group id.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}

func signalName(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}

// lineWriter copies what it is given to raw and hands each whole line to
// line. It is written to by one goroutine (os/exec's copier).
type lineWriter struct {
	raw  io.Writer
	line func(string)

	mu  sync.Mutex
	buf []byte
}

// maxLine bounds a line kept whole; a longer one is handed on in pieces.
const maxLine = 1 << 20

func (w *lineWriter) Write(p []byte) (int, error) {
	_, _ = w.raw.Write(p) // a full disk must not stop the run; the events still flow
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > maxLine {
		w.line(string(w.buf))
		w.buf = nil
	}
	return len(p), nil
}

// flush hands on a last line that had no newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.line(string(w.buf))
		w.buf = nil
	}
}
