package slurm

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseAccounting(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		out     string
		want    Outcome
		wantErr bool
	}{
		"completed": {
			out:  "12|COMPLETED|0:0|n[1-2]|00:00:05\n12.batch|COMPLETED|0:0|n1|00:00:05\n12.0|COMPLETED|0:0|n[1-2]|00:00:04\n",
			want: Outcome{JobID: "12", State: StateCompleted, Nodes: "n[1-2]", Elapsed: "00:00:05"}},
		"failed with exit code": {
			out:  "13|FAILED|3:0|n1|00:00:01\n13.batch|FAILED|3:0|n1|00:00:01\n13.0|FAILED|3:0|n1|00:00:00\n",
			want: Outcome{JobID: "13", State: StateFailed, ExitCode: 3, Nodes: "n1", Elapsed: "00:00:01"}},
		"cancelled by a user": {
			out:  "14|CANCELLED by 0|0:0|n1|00:00:03\n14.batch|CANCELLED|0:15|n1|00:00:03\n",
			want: Outcome{JobID: "14", State: StateCancelled, Nodes: "n1", Elapsed: "00:00:03"}},
		"a step out of memory": {
			out:  "15|FAILED|0:125|n1|00:01:00\n15.batch|FAILED|0:125|n1|00:01:00\n15.0|OUT_OF_MEMORY|0:125|n1|00:00:59\n",
			want: Outcome{JobID: "15", State: StateFailed, Signal: 125, Nodes: "n1", Elapsed: "00:01:00", OOM: true}},
		"timeout": {
			out:  "16|TIMEOUT|0:0|n2|00:01:07\n16.batch|CANCELLED|0:15|n2|00:01:07\n",
			want: Outcome{JobID: "16", State: StateTimeout, Nodes: "n2", Elapsed: "00:01:07"}},
		"no record yet": {out: "", want: Outcome{JobID: "17"}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := parseAccounting(tc.want.JobID, tc.out)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseQueue(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		out     string
		want    queueEntry
		wantErr error
	}{
		"pending":   {out: "PENDING|Resources|\n", want: queueEntry{State: StatePending, Reason: "Resources"}},
		"running":   {out: "RUNNING|None|gpuflow-n[1-2]\n", want: queueEntry{State: StateRunning, Reason: "None", Nodes: "gpuflow-n[1-2]"}},
		"forgotten": {out: "\n", wantErr: errNotInQueue},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := parseQueue(tc.out)
			if err != tc.wantErr {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormatTimeLimit(t *testing.T) {
	t.Parallel()
	tests := map[time.Duration]string{
		time.Minute:                   "00:01:00",
		90 * time.Minute:              "01:30:00",
		4 * time.Hour:                 "04:00:00",
		72*time.Hour + 5*time.Minute:  "3-00:05:00",
		61 * time.Second:              "00:02:00",
		23*time.Hour + 59*time.Minute: "23:59:00",
	}
	for d, want := range tests {
		if got := FormatTimeLimit(d); got != want {
			t.Errorf("FormatTimeLimit(%s) = %s, want %s", d, got, want)
		}
	}
}

// TestOutcomeDiagnostics checks that each way a job can end is told apart
// and says what to do; retries are only for losses that were not the
// job's fault.
func TestOutcomeDiagnostics(t *testing.T) {
	t.Parallel()
	job := Job{Stage: "exec.x", Executor: "executor.slurm.short", TimeLimit: time.Minute, Retries: 1}
	tests := map[string]struct {
		o         Outcome
		summary   string
		inDetail  string
		retryable bool
	}{
		"timeout":      {Outcome{JobID: "1", State: StateTimeout, Elapsed: "00:01:07"}, "Slurm job 1 reached its time limit", "time limit of 1m after 00:01:07", false},
		"oom state":    {Outcome{JobID: "2", State: StateOutOfMemory}, "Slurm job 2 ran out of memory", "--mem=0", false},
		"oom step":     {Outcome{JobID: "3", State: StateFailed, OOM: true}, "Slurm job 3 ran out of memory", "executor.slurm.short", false},
		"node fail":    {Outcome{JobID: "4", State: StateNodeFail, Nodes: "n2"}, "Slurm job 4 lost a node", "sinfo -R", true},
		"preempted":    {Outcome{JobID: "5", State: StatePreempted}, "Slurm job 5 was preempted", "raise retries", true},
		"cancelled":    {Outcome{JobID: "6", State: StateCancelled}, "Slurm job 6 was cancelled", "outside gpuflow", false},
		"we cancelled": {Outcome{JobID: "7", State: StateCancelled, CancelledByUs: true}, "Slurm job 7 cancelled", "scancel", false},
		"failed":       {Outcome{JobID: "8", State: StateFailed, ExitCode: 3, Nodes: "n1"}, "Slurm job 8 failed", "on n1 ended with exit code 3", false},
		"deadline":     {Outcome{JobID: "9", State: StateDeadline}, "Slurm job 9 ended in state DEADLINE", "sacct -j 9", false},
		"failed, no exit code recorded": {Outcome{JobID: "11", State: StateFailed, Nodes: "n1"},
			"Slurm job 11 failed", "Slurm recorded no exit code", false},
		"preempted, stopped": {Outcome{JobID: "10", State: StatePreempted, CancelledByUs: true},
			"Slurm job 10 was preempted", "PREEMPTED", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := tc.o.Diagnostic(job, 1)
			if d.Summary != tc.summary || !strings.Contains(d.Detail, tc.inDetail) {
				t.Errorf("diagnostic %q: %q; want summary %q with %q in the detail", d.Summary, d.Detail, tc.summary, tc.inDetail)
			}
			if got := tc.o.Retryable(); got != tc.retryable {
				t.Errorf("Retryable() = %v, want %v", got, tc.retryable)
			}
		})
	}
}
