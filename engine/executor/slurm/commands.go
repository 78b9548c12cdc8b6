package slurm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// submit runs sbatch and returns the new job's ID.
func submit(ctx context.Context, r Runner, script, workDir, runDir, gpuflow string) (string, error) {
	args := append(submitFlags(workDir, runDir), script, runDir, gpuflow)
	out, err := r.Run(ctx, "sbatch", args...)
	if err != nil {
		return "", err
	}
	// --parsable prints "ID" or "ID;CLUSTER".
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("sbatch printed %q, not a job ID", strings.TrimSpace(string(out)))
	}
	return id, nil
}

// queueEntry is the job as squeue shows it.
type queueEntry struct {
	State  string
	Reason string
	Nodes  string
}

// errNotInQueue: squeue no longer knows the job (it ended longer than
// MinJobAge ago).
var errNotInQueue = errors.New("job not in the queue")

// queue asks squeue for the job, in whatever state it is.
func queue(ctx context.Context, r Runner, id string) (queueEntry, error) {
	out, err := r.Run(ctx, "squeue", "--noheader", "--states=all", "--jobs="+id, "--format=%T|%r|%N")
	var ce *CommandError
	if errors.As(err, &ce) && strings.Contains(ce.Stderr, "Invalid job id") {
		return queueEntry{}, errNotInQueue
	}
	if err != nil {
		return queueEntry{}, err
	}
	return parseQueue(string(out))
}

func parseQueue(out string) (queueEntry, error) {
	line := strings.TrimSpace(out)
	if line == "" {
		return queueEntry{}, errNotInQueue
	}
	line, _, _ = strings.Cut(line, "\n")
	f := strings.Split(line, "|")
	if len(f) != 3 {
		return queueEntry{}, fmt.Errorf("squeue printed %q, not STATE|REASON|NODES", line)
	}
	return queueEntry{State: f[0], Reason: f[1], Nodes: f[2]}, nil
}

// accounting asks sacct how the job and its steps ended.
func accounting(ctx context.Context, r Runner, id string) (Outcome, error) {
	out, err := r.Run(ctx, "sacct", "--noheader", "--parsable2", "--jobs="+id,
		"--format=JobID,State,ExitCode,NodeList,Elapsed")
	if err != nil {
		return Outcome{}, err
	}
	return parseAccounting(id, string(out))
}

// parseAccounting reads sacct's JobID|State|ExitCode|NodeList|Elapsed
// lines: the job's own line gives its state and exit code; any step that
// ran out of memory marks the job so.
func parseAccounting(id, out string) (Outcome, error) {
	o := Outcome{JobID: id}
	found := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 5 {
			continue
		}
		state, _, _ := strings.Cut(f[1], " ") // "CANCELLED by 1000"
		if state == StateOutOfMemory {
			o.OOM = true
		}
		if f[0] != id {
			continue
		}
		found = true
		o.State, o.Nodes, o.Elapsed = state, f[3], f[4]
		o.ExitCode, o.Signal = parseExitCode(f[2])
	}
	if !found {
		return o, fmt.Errorf("sacct has no record of job %s yet", id)
	}
	return o, nil
}

// parseExitCode reads Slurm's "CODE:SIGNAL".
func parseExitCode(s string) (code, signal int) {
	c, sig, _ := strings.Cut(s, ":")
	code, _ = strconv.Atoi(c)
	signal, _ = strconv.Atoi(sig)
	return code, signal
}

// cancel runs scancel, which signals every step of the job and ends it.
func cancel(ctx context.Context, r Runner, id string) error {
	_, err := r.Run(ctx, "scancel", id)
	return err
}
