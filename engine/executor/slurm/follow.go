package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// stuckReasons explain the pending reasons that no amount of waiting for
// other jobs resolves: the request or the cluster must change.
var stuckReasons = map[string]string{
	"PartitionNodeLimit":            "it asks for more nodes than the partition allows, or nodes it needs are down or drained (sinfo -R)",
	"PartitionTimeLimit":            "its time_limit is above the partition's MaxTime (sinfo -o '%P %l')",
	"ReqNodeNotAvail":               "nodes it needs are down, drained or reserved (sinfo -R)",
	"QOSMaxWallDurationPerJobLimit": "its time_limit is above its qos's MaxWall (sacctmgr show qos)",
	"BadConstraints":                "no node matches its constraints",
}

// maxQueueErrors is how many squeue failures in a row end the following
// of a job: a restarting slurmctld is back within a few polls.
const maxQueueErrors = 20

// follower follows one job: its state from squeue, its nodes' events from
// the run directory as they appear, and at the end its record in sacct.
type follower struct {
	r      *Run
	id     string
	jobDir string
	nodes  int
	sink   api.EventSink
	tails  []*rundir.Tail
	last   queueEntry
}

func newFollower(r *Run, id, runDir string, sink api.EventSink) *follower {
	f := &follower{r: r, id: id, jobDir: rundir.JobDir(runDir, id), nodes: max(1, r.job.Nodes), sink: sink}
	for n := range f.nodes {
		f.tails = append(f.tails, rundir.NewTail(rundir.NodeDir(f.jobDir, n)))
	}
	return f
}

// follow returns once the job has ended, relaying events as it goes. An
// error means Slurm could not be asked about the job any more, or ctx
// ended.
func (f *follower) follow(ctx context.Context) (Outcome, error) {
	tick := time.NewTicker(f.r.opts.Tail)
	defer tick.Stop()
	var nextPoll time.Time
	failures := 0
	stopped := f.r.stopCh
	for {
		f.relay()
		if now := time.Now(); !now.Before(nextPoll) || f.resultsComplete() {
			nextPoll = now.Add(f.r.opts.Poll)
			q, err := queue(ctx, f.r.opts.Runner, f.id)
			switch {
			case errors.Is(err, errNotInQueue):
				return f.final(ctx), nil
			case err != nil && ctx.Err() == nil:
				if failures++; failures >= maxQueueErrors {
					return Outcome{JobID: f.id}, err
				}
			case err == nil:
				failures = 0
				f.report(q)
				if IsFinal(q.State) {
					return f.final(ctx), nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return Outcome{JobID: f.id}, ctx.Err()
		case <-stopped:
			stopped, nextPoll = nil, time.Time{} // cancelled: look for the end now
		case <-tick.C:
		}
	}
}

// report logs the job's state whenever it or its reason changes.
func (f *follower) report(q queueEntry) {
	if q == f.last {
		return
	}
	f.last = q
	msg := fmt.Sprintf("Slurm job %s is %s", f.id, q.State)
	switch {
	case q.State == StatePending && stuckReasons[q.Reason] != "":
		f.sink.Send(logEvent("warn", fmt.Sprintf("Slurm job %s is pending (%s): %s; it waits until that changes, and Ctrl-C cancels it",
			f.id, q.Reason, stuckReasons[q.Reason])))
		return
	case q.State == StatePending && q.Reason != "None":
		msg = fmt.Sprintf("Slurm job %s is pending (%s)", f.id, q.Reason)
	case q.State == StatePending:
		msg = fmt.Sprintf("Slurm job %s is pending", f.id)
	case q.State == StateRunning:
		msg = fmt.Sprintf("Slurm job %s is running on %s", f.id, q.Nodes)
	case q.State == stateCompleting || IsFinal(q.State):
		return // the outcome says how it ended
	}
	f.sink.Send(logEvent("info", msg))
}

// final is the job's outcome: sacct's record once it shows the end, else
// what squeue last said (a cluster without accounting).
func (f *follower) final(ctx context.Context) Outcome {
	defer f.relay()
	fallback := Outcome{JobID: f.id, State: f.last.State, Nodes: f.last.Nodes}
	if fallback.State == "" {
		fallback.State = "UNKNOWN"
	}
	deadline := time.Now().Add(f.r.opts.AccountingWait)
	for {
		o, err := accounting(ctx, f.r.opts.Runner, f.id)
		var ce *CommandError
		switch {
		case err == nil && IsFinal(o.State) && !o.exitPending():
			return o
		case err == nil && IsFinal(o.State):
			// sacct can show a job FAILED before its exit code lands.
			fallback = o
		case errors.As(err, &ce):
			return fallback // no sacct, or no accounting storage
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fallback
		}
		select {
		case <-ctx.Done():
		case <-time.After(f.r.opts.Tail):
		}
	}
}

// relay passes on the events the nodes wrote since the last call, each
// log line marked with its node when the job has several.
func (f *follower) relay() {
	for n, t := range f.tails {
		events, _ := t.Next() // a read error now is retried at the next tick
		for _, e := range events {
			if e.Log != nil && f.nodes > 1 {
				l := *e.Log
				l.Message = fmt.Sprintf("[node %d] %s", n, l.Message)
				e.Log = &l
			}
			f.sink.Send(e)
		}
	}
}

// resultsComplete reports whether every node has written its result, when
// the job is about to end and is worth asking about at once.
func (f *follower) resultsComplete() bool {
	for n := range f.nodes {
		if _, err := os.Stat(filepath.Join(rundir.NodeDir(f.jobDir, n), rundir.ResultFile)); err != nil {
			return false
		}
	}
	return true
}

// results reads each node's result; nil where a node wrote none.
func (f *follower) results() []*rundir.Result {
	out := make([]*rundir.Result, f.nodes)
	for n := range f.nodes {
		out[n], _ = rundir.ReadResult(rundir.NodeDir(f.jobDir, n))
	}
	return out
}
