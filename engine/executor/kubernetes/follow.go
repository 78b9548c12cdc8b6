package kubernetes

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// maxStatusErrors is how many failed reads in a row end the following of
// a Job: a restarting API server is back within a few polls.
const maxStatusErrors = 20

// logDrain is how long the log streams of ended pods may take to deliver
// their last lines before they are closed.
const logDrain = time.Second

// follower follows one Job: its pods' phases and container logs from the
// API server, its nodes' events from the run directory as they appear.
type follower struct {
	r     *Run
	c     *Cluster
	ref   Ref
	sink  api.EventSink
	nodes int
	tails []*rundir.Tail
	// seen is the last state reported for each pod; streaming the pods
	// whose log is being read.
	seen      map[string]string
	streaming map[string]bool
	logs      sync.WaitGroup
	logCtx    context.Context
	stopLogs  context.CancelFunc
	// pendingSince is when each pod was first seen waiting for a node or
	// its image.
	pendingSince map[string]time.Time
}

func newFollower(r *Run, c *Cluster, ref Ref, sink api.EventSink) *follower {
	f := &follower{r: r, c: c, ref: ref, sink: sink, nodes: max(1, r.job.Nodes), seen: map[string]string{},
		streaming: map[string]bool{}, pendingSince: map[string]time.Time{}}
	jobDir := rundir.JobDir(ref.RunDir, ref.Name)
	for n := range f.nodes {
		f.tails = append(f.tails, rundir.NewTail(rundir.NodeDir(jobDir, n)))
	}
	f.logCtx, f.stopLogs = context.WithCancel(context.Background())
	return f
}

// follow returns once the Job has ended, or is gone, relaying events as
// it goes. An error means the API server could not be asked about the
// Job any more.
func (f *follower) follow(ctx context.Context) (Outcome, error) {
	defer f.closeLogs()
	tick := time.NewTicker(f.r.opts.Tail)
	defer tick.Stop()
	var nextPoll, deleteBy time.Time
	failures := 0
	stopped := f.r.stopCh
	for {
		f.relay()
		if now := time.Now(); !now.Before(nextPoll) {
			nextPoll = now.Add(f.r.opts.Poll)
			st, err := f.c.status(ctx, f.ref)
			switch {
			case err != nil && ctx.Err() == nil:
				if failures++; failures >= maxStatusErrors {
					return Outcome{Ref: f.ref}, err
				}
			case err == nil:
				failures = 0
				if o, end := f.observe(ctx, st, deleteBy); end {
					f.relay()
					return o, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return Outcome{Ref: f.ref}, ctx.Err()
		case <-stopped:
			stopped, nextPoll, deleteBy = nil, time.Time{}, time.Now().Add(f.r.opts.DeleteWait)
		case <-tick.C:
		}
	}
}

// observe reports what changed and says whether the Job has ended, and
// how. deleteBy is set once gpuflow deleted the Job.
func (f *follower) observe(ctx context.Context, st jobStatus, deleteBy time.Time) (Outcome, bool) {
	base := Outcome{Ref: f.ref, CancelledByUs: !deleteBy.IsZero()}
	if st.gone {
		base.State = StateDeleted
		return base, true
	}
	f.report(st.pods)
	f.streamLogs(st.pods)
	switch {
	case st.done:
		base.State = StateCompleted
		return base, true
	case !deleteBy.IsZero():
		// Deleted by us: over once its pods are gone, or when waiting for
		// that has taken too long.
		base.State = StateDeleted
		return base, len(st.pods) == 0 || time.Now().After(deleteBy)
	case st.failed:
		return failedOutcome(base, st), true
	}
	if o, stuck := f.stuck(st.pods); stuck {
		if err := f.c.delete(ctx, f.ref); err != nil {
			o.Message += fmt.Sprintf(" (deleting the %s failed too: %s)", f.ref.Kind, err)
		}
		return o, true
	}
	return base, false
}

// relay sends the events the node hosts wrote since the last call.
func (f *follower) relay() {
	for _, t := range f.tails {
		events, _ := t.Next()
		for _, e := range events {
			f.sink.Send(e)
		}
	}
}

// report sends an event whenever a pod's phase, node or reason changes.
func (f *follower) report(pods []corev1.Pod) {
	for i := range pods {
		p := &pods[i]
		state := podState(p)
		if f.seen[p.Name] == state {
			continue
		}
		f.seen[p.Name] = state
		level := "info"
		if waiting := waitingReason(p); waiting != "" || unschedulable(p) != "" {
			level = "warn"
		}
		f.sink.Send(logEvent(level, fmt.Sprintf("pod %s (node %d) %s", p.Name, podIndex(p), state)))
	}
}

// podState describes a pod in a few words: its phase, where it runs, and
// what it waits for or how its container ended.
func podState(p *corev1.Pod) string {
	s := "is " + string(p.Status.Phase)
	if p.Spec.NodeName != "" {
		s += " on " + p.Spec.NodeName
	}
	if msg := unschedulable(p); msg != "" {
		return s + ": unschedulable: " + msg
	}
	if w := waitingReason(p); w != "" {
		return s + ": " + w
	}
	if t := terminated(p); t != nil {
		return s + fmt.Sprintf(": exit code %d (%s)", t.ExitCode, t.Reason)
	}
	return s
}

// podIndex is the pod's index in the Job, its node rank.
func podIndex(p *corev1.Pod) int {
	n, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
	if err != nil {
		return -1
	}
	return n
}

// unschedulable is the scheduler's message for a pod no node can take.
func unschedulable(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}

// waitingReason is why the pod's container has not started, when that is
// a problem (the image, its configuration) rather than a step.
func waitingReason(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && stuckWaiting[w.Reason] {
			return strings.TrimSpace(w.Reason + ": " + w.Message)
		}
	}
	return ""
}

// stuckWaiting are the reasons a container waits that do not go away by
// waiting.
var stuckWaiting = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true,
}

// failFast are the waiting reasons that end the stage at once: the image
// cannot be had, or the container cannot be made.
var failFast = map[string]bool{
	"ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true, "CreateContainerConfigError": true,
}

func terminated(p *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated != nil {
			return cs.State.Terminated
		}
	}
	return nil
}

// stuck finds a pod that cannot start: its image cannot be pulled, or no
// node has taken it for longer than the pending timeout.
func (f *follower) stuck(pods []corev1.Pod) (Outcome, bool) {
	now := time.Now()
	for i := range pods {
		p := &pods[i]
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && failFast[w.Reason] {
				return Outcome{Ref: f.ref, State: StateImage, Pod: p.Name, Node: podIndex(p), NodeName: p.Spec.NodeName,
					Reason: w.Reason, Message: w.Message}, true
			}
		}
		msg := unschedulable(p)
		if msg == "" {
			delete(f.pendingSince, p.Name)
			continue
		}
		since, ok := f.pendingSince[p.Name]
		if !ok {
			f.pendingSince[p.Name] = now
			continue
		}
		if limit := f.r.job.PendingTimeout(); limit > 0 && now.Sub(since) >= limit {
			return Outcome{Ref: f.ref, State: StateUnschedulable, Pod: p.Name, Node: podIndex(p),
				Reason: corev1.PodReasonUnschedulable, Message: msg, Waited: now.Sub(since)}, true
		}
	}
	return Outcome{}, false
}

// failedOutcome explains a failed Job by the first of its pods that
// failed.
func failedOutcome(o Outcome, st jobStatus) Outcome {
	o.State, o.Reason, o.Message = StateFailed, st.reason, st.message
	var first *corev1.Pod
	var firstAt time.Time
	for i := range st.pods {
		p := &st.pods[i]
		t := terminated(p)
		if t == nil || t.ExitCode == 0 {
			continue
		}
		if first == nil || t.FinishedAt.Time.Before(firstAt) {
			first, firstAt = p, t.FinishedAt.Time
		}
	}
	if first != nil {
		t := terminated(first)
		o.Pod, o.Node, o.NodeName, o.ExitCode, o.ContainerReason = first.Name, podIndex(first), first.Spec.NodeName, t.ExitCode, t.Reason
		if t.Message != "" {
			o.Message = t.Message
		}
	}
	return o
}

// streamLogs starts reading the container log of every pod whose
// container has started, once per pod; each line becomes a log event.
func (f *follower) streamLogs(pods []corev1.Pod) {
	for i := range pods {
		p := &pods[i]
		if f.streaming[p.Name] || !started(p) {
			continue
		}
		f.streaming[p.Name] = true
		f.logs.Add(1)
		go func(name string, node int) {
			defer f.logs.Done()
			f.streamLog(name, node)
		}(p.Name, podIndex(p))
	}
}

func started(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

func (f *follower) streamLog(pod string, node int) {
	req := f.c.Client.CoreV1().Pods(f.ref.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: ContainerName, Follow: true})
	stream, err := req.Stream(f.logCtx)
	if err != nil {
		if f.logCtx.Err() == nil {
			f.sink.Send(logEvent("warn", fmt.Sprintf("the log of pod %s cannot be read: %s", pod, err)))
		}
		return
	}
	defer stream.Close()
	prefix := ""
	if f.nodes > 1 {
		prefix = fmt.Sprintf("[node %d] ", node)
	}
	sc := bufio.NewScanner(stream)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := prefix + sc.Text()
		f.r.addLog(line)
		f.sink.Send(api.Event{Time: time.Now(), Log: &api.Log{Level: "info", Message: line}})
	}
}

// closeLogs gives the log streams a moment to deliver their last lines,
// then closes them.
func (f *follower) closeLogs() {
	done := make(chan struct{})
	go func() { f.logs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(logDrain):
	}
	f.stopLogs()
	<-done
}

// results reads each node's result from the run directory; nil where a
// node wrote none.
func (f *follower) results() []*rundir.Result {
	out := make([]*rundir.Result, f.nodes)
	jobDir := rundir.JobDir(f.ref.RunDir, f.ref.Name)
	for n := range out {
		out[n], _ = rundir.ReadResult(rundir.NodeDir(jobDir, n))
	}
	return out
}
