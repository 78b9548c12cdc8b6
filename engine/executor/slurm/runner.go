package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Runner runs one of Slurm's commands (sbatch, squeue, sacct, scancel)
// and returns what it wrote to stdout. A command that fails returns a
// *CommandError.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// CommandError is a Slurm command that could not run or exited non-zero.
type CommandError struct {
	Name string
	// Stderr is what the command wrote to stderr, trimmed.
	Stderr string
	// NotFound: the command is not on $PATH.
	NotFound bool
	Err      error
}

func (e *CommandError) Error() string {
	if e.Stderr != "" {
		return fmt.Sprintf("%s: %s", e.Name, e.Stderr)
	}
	return fmt.Sprintf("%s: %v", e.Name, e.Err)
}

func (e *CommandError) Unwrap() error { return e.Err }

// ExecRunner runs the commands found on $PATH.
type ExecRunner struct{}

// Run runs name with args.
func (ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, &CommandError{Name: name, Stderr: strings.TrimSpace(stderr.String()), Err: err,
			NotFound: errors.Is(err, exec.ErrNotFound)}
	}
	return out, nil
}
