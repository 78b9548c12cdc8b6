package slurm

import (
	"fmt"
	"time"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Job states gpuflow tells apart (squeue and sacct spell them alike).
const (
	StatePending     = "PENDING"
	StateRunning     = "RUNNING"
	StateCompleted   = "COMPLETED"
	StateFailed      = "FAILED"
	StateTimeout     = "TIMEOUT"
	StateCancelled   = "CANCELLED"
	StateOutOfMemory = "OUT_OF_MEMORY"
	StateNodeFail    = "NODE_FAIL"
	StatePreempted   = "PREEMPTED"
	StateBootFail    = "BOOT_FAIL"
	StateDeadline    = "DEADLINE"
	stateCompleting  = "COMPLETING"
)

// finalStates are the states a job never leaves.
var finalStates = map[string]bool{
	StateCompleted: true, StateFailed: true, StateTimeout: true, StateCancelled: true, StateOutOfMemory: true,
	StateNodeFail: true, StatePreempted: true, StateBootFail: true, StateDeadline: true, "REVOKED": true, "SPECIAL_EXIT": true,
}

// IsFinal reports whether a job in state has ended.
func IsFinal(state string) bool { return finalStates[state] }

// Outcome is how a job ended.
type Outcome struct {
	JobID string
	State string
	// ExitCode and Signal are the job's, as sacct reports them ("3:0").
	ExitCode int
	Signal   int
	Nodes    string
	Elapsed  string
	// OOM: a step of the job ran out of memory, whatever the job's state.
	OOM bool
	// CancelledByUs: gpuflow ran scancel for this job.
	CancelledByUs bool
}

// EndedBySlurm reports whether Slurm ended the job's processes (a limit,
// a cancel, a lost node) rather than the processes ending by themselves.
// Node hosts killed that way cannot report, and their failures to do so
// are no news.
func (o Outcome) EndedBySlurm() bool {
	return o.State != StateCompleted && o.State != StateFailed || o.OOM
}

// Retryable reports whether submitting the job again may go differently:
// it lost its nodes, through no fault of its own.
func (o Outcome) Retryable() bool {
	return !o.CancelledByUs && (o.State == StatePreempted || o.State == StateNodeFail || o.State == StateBootFail)
}

// Diagnostic explains an outcome other than success to the user, saying
// what to do about it; attempts is how many jobs the stage ran.
func (o Outcome) Diagnostic(j Job, attempts int) api.Diagnostic {
	summary, detail := o.explain(j)
	if attempts > 1 {
		detail += fmt.Sprintf(" gpuflow submitted the stage %d times (retries = %d).", attempts, j.Retries)
	}
	return api.Diagnostic{Severity: api.Error, Summary: summary, Detail: detail}
}

func (o Outcome) explain(j Job) (summary, detail string) {
	id, where := o.JobID, o.where()
	switch {
	case o.OOM || o.State == StateOutOfMemory:
		return fmt.Sprintf("Slurm job %s ran out of memory", id), fmt.Sprintf(
			"A process of job %s%s used more memory than the job may (state %s). Ask for more with extra_sbatch = [\"--mem=0\"] (all of each node's memory) in %s, or make the stage use less.",
			id, where, StateOutOfMemory, j.Executor)
	case o.State == StateTimeout:
		return fmt.Sprintf("Slurm job %s reached its time limit", id), fmt.Sprintf(
			"Slurm stopped job %s%s when it reached its time limit%s after %s (state TIMEOUT). Raise time_limit in %s, or give the stage less to do.",
			id, where, o.limit(j), o.Elapsed, j.Executor)
	case o.State == StateNodeFail || o.State == StateBootFail:
		return fmt.Sprintf("Slurm job %s lost a node", id), fmt.Sprintf(
			"A node of job %s%s failed (state %s). gpuflow submits such a job again up to retries times (%d in %s); `sinfo -R` shows why nodes are down.",
			id, where, o.State, j.Retries, j.Executor)
	case o.State == StatePreempted:
		return fmt.Sprintf("Slurm job %s was preempted", id), fmt.Sprintf(
			"Slurm took the nodes of job %s%s for a job of higher priority (state PREEMPTED). gpuflow submits such a job again up to retries times (%d in %s); raise retries, or use a qos or partition that is not preempted.",
			id, where, j.Retries, j.Executor)
	case o.State == StateCancelled && o.CancelledByUs:
		return fmt.Sprintf("Slurm job %s cancelled", id), fmt.Sprintf(
			"gpuflow cancelled job %s%s with scancel because the stage was stopped.", id, where)
	case o.State == StateCancelled:
		return fmt.Sprintf("Slurm job %s was cancelled", id), fmt.Sprintf(
			"Job %s%s was cancelled outside gpuflow, by scancel or an administrator (state CANCELLED). Apply again to run the stage again.", id, where)
	case o.State == StateFailed && o.exitPending():
		return fmt.Sprintf("Slurm job %s failed", id), fmt.Sprintf(
			"Job %s%s ended in state FAILED, and Slurm recorded no exit code for it; `sacct -j %s` says more.", id, where, id)
	case o.State == StateFailed:
		return fmt.Sprintf("Slurm job %s failed", id), fmt.Sprintf(
			"Job %s%s ended with exit code %d%s (state FAILED).", id, where, o.ExitCode, o.signal())
	case o.State == StateCompleted:
		return fmt.Sprintf("Slurm job %s completed without a result", id), fmt.Sprintf(
			"Job %s%s completed, but not every node host reported how the stage went.", id, where)
	}
	return fmt.Sprintf("Slurm job %s ended in state %s", id, o.State), fmt.Sprintf(
		"Job %s%s ended in state %s with exit code %d%s; `sacct -j %s` says more.", id, where, o.State, o.ExitCode, o.signal(), id)
}

// exitPending: a FAILED job whose record has no exit code and no
// signal yet, which a failed job always has once Slurm writes it (a job
// that ran out of memory is told apart by its steps).
func (o Outcome) exitPending() bool {
	return o.State == StateFailed && o.ExitCode == 0 && o.Signal == 0 && !o.OOM
}

func (o Outcome) where() string {
	if o.Nodes == "" || o.Nodes == "None assigned" {
		return ""
	}
	return " on " + o.Nodes
}

func (o Outcome) limit(j Job) string {
	if j.TimeLimit == 0 {
		return " (the partition's default)"
	}
	return " of " + humanMinutes(j.TimeLimit)
}

// humanMinutes writes a whole number of minutes as "90m", "4h" or "1h30m".
func humanMinutes(d time.Duration) string {
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case h == 0:
		return fmt.Sprintf("%dm", m)
	case m == 0:
		return fmt.Sprintf("%dh", h)
	}
	return fmt.Sprintf("%dh%dm", h, m)
}

func (o Outcome) signal() string {
	if o.Signal == 0 {
		return ""
	}
	return fmt.Sprintf(" and signal %d", o.Signal)
}
