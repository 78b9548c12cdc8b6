package kubernetes

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// Ref is what identifies a submitted Job (or JobSet), recorded in state so
// that a gpuflow started again follows it instead of submitting another.
type Ref struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// RunDir is the run directory its node hosts write into.
	RunDir string `json:"run_dir"`
}

// Kinds a Ref names.
const (
	KindJob    = "Job"
	KindJobSet = "JobSet"
)

// Options configure one stage run through Kubernetes.
type Options struct {
	// Connect returns the connection to the cluster. Default: Connect
	// with the run's Target.
	Connect func() (*Cluster, error)
	// Resume is the Job an earlier gpuflow submitted for this stage; it is
	// followed to its end instead of submitting another.
	Resume *Ref
	// Submitted is told of each Job once the API server accepted it, so
	// that it can be recorded.
	Submitted func(Ref)
	// Poll is how often the Job and its pods are read. Default 1s.
	Poll time.Duration
	// Tail is how often the nodes' event files are read. Default 250ms.
	Tail time.Duration
	// DeleteWait bounds the wait for a deleted Job's pods to go.
	// Default 60s.
	DeleteWait time.Duration
}

func (o *Options) setDefaults(t Target) {
	if o.Connect == nil {
		o.Connect = func() (*Cluster, error) { return Connect(t) }
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Tail <= 0 {
		o.Tail = 250 * time.Millisecond
	}
	if o.DeleteWait <= 0 {
		o.DeleteWait = time.Minute
	}
	if o.Submitted == nil {
		o.Submitted = func(Ref) {}
	}
}

// Run is one stage run through Kubernetes. For the engine it stands where
// a plugin process stands for a local run: Provider().ApplyStage submits
// the Job (or follows the one in Options.Resume) to its end, Stop and
// Kill delete it.
type Run struct {
	job    Job
	target Target
	opts   Options

	mu      sync.Mutex
	cluster *Cluster
	ref     *Ref
	stopped bool
	ended   bool
	logTail []string
	// stopCh is closed by the first Stop or Kill.
	stopCh chan struct{}
}

// NewRun prepares a run of job on the target's cluster; nothing is sent
// until ApplyStage.
func NewRun(job Job, target Target, opts Options) *Run {
	opts.setDefaults(target)
	return &Run{job: job, target: target, opts: opts, stopCh: make(chan struct{})}
}

// Provider answers the engine's ApplyStage and Stop for this run.
func (r *Run) Provider() api.Provider { return provider{r} }

// Exited reports whether the run has ended.
func (r *Run) Exited() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended
}

// StderrTail returns the last lines of the pods' container log.
func (r *Run) StderrTail() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.logTail...)
}

// Kill deletes the Job at once; it does nothing once the run has ended.
func (r *Run) Kill() { _ = r.stop() }

// stop deletes the current Job, and keeps any from being submitted.
func (r *Run) stop() error {
	r.mu.Lock()
	if !r.stopped {
		close(r.stopCh)
	}
	r.stopped = true
	ref, c, ended := r.ref, r.cluster, r.ended
	r.mu.Unlock()
	if ref == nil || ended {
		return nil
	}
	ctx, done := context.WithTimeout(context.Background(), deleteTimeout)
	defer done()
	return c.delete(ctx, *ref)
}

// deleteTimeout bounds the delete request, so that an unanswering API
// server cannot hold up a stop.
const deleteTimeout = 30 * time.Second

func (r *Run) isStopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// apply submits the stage's Job, or takes up the recorded one, and
// follows it to its end.
func (r *Run) apply(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	defer func() {
		r.mu.Lock()
		r.ended = true
		r.mu.Unlock()
	}()
	sink = &lockedSink{sink: sink}
	c, err := r.opts.Connect()
	if err != nil {
		return &api.ApplyResponse{Diagnostics: api.Diagnostics{r.connectDiagnostic(err)}}, nil
	}
	r.mu.Lock()
	r.cluster = c
	r.mu.Unlock()
	ref, diags := r.start(ctx, c, req, sink)
	if diags != nil {
		return &api.ApplyResponse{Diagnostics: diags}, nil
	}
	f := newFollower(r, c, ref, sink)
	o, err := f.follow(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err() // the engine gave up on the run; Kill deleted the Job
	}
	if err != nil {
		return &api.ApplyResponse{Diagnostics: api.Diagnostics{lostDiagnostic(ref, err)}}, nil
	}
	return r.response(o, f.results(), ref), nil
}

// start follows the recorded Job where it still exists, else submits one.
func (r *Run) start(ctx context.Context, c *Cluster, req *api.ApplyRequest, sink api.EventSink) (Ref, api.Diagnostics) {
	if res := r.opts.Resume; res != nil {
		exists, err := c.exists(ctx, *res)
		switch {
		case err != nil:
			return Ref{}, api.Diagnostics{lostDiagnostic(*res, err)}
		case exists:
			r.setRef(*res)
			sink.Send(logEvent("info", fmt.Sprintf("following %s %s/%s, submitted by an earlier gpuflow apply", res.Kind, res.Namespace, res.Name)))
			return *res, nil
		}
		sink.Send(logEvent("warn", fmt.Sprintf("%s %s/%s, submitted by an earlier gpuflow apply, is gone; submitting the stage again", res.Kind, res.Namespace, res.Name)))
	}
	if r.isStopped() {
		return Ref{}, api.Diagnostics{{Severity: api.Error, Summary: "Stage stopped before its Kubernetes Job was submitted",
			Detail: "The stage was stopped before gpuflow submitted its Job; nothing ran."}}
	}
	s, err := r.prepare(req)
	if err != nil {
		return Ref{}, api.Diagnostics{{Severity: api.Error, Summary: "Stage run cannot be prepared", Detail: err.Error() + "."}}
	}
	ref, err := c.submit(ctx, r.job, s)
	if err != nil {
		return Ref{}, api.Diagnostics{r.submitDiagnostic(c, err)}
	}
	if r.setRef(ref) {
		_ = r.stop() // stopped while the API server answered
	}
	r.opts.Submitted(ref)
	sink.Send(logEvent("info", fmt.Sprintf("submitted %s %s/%s to %s (%s)", ref.Kind, ref.Namespace, ref.Name, c.Host, r.job.Executor)))
	return ref, nil
}

// prepare writes the request into the run directory and names the
// submission.
func (r *Run) prepare(req *api.ApplyRequest) (Submission, error) {
	runDir, err := filepath.Abs(req.RunDir)
	if err != nil {
		return Submission{}, err
	}
	stage := req.StageRequest
	if stage.WorkDir, err = filepath.Abs(stage.WorkDir); err != nil {
		return Submission{}, err
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return Submission{}, err
	}
	if err := rundir.WriteRequest(runDir, &rundir.Request{Plugin: r.job.Plugin, Stage: stage}); err != nil {
		return Submission{}, fmt.Errorf("writing the stage request: %w", err)
	}
	return Submission{Name: BaseName(r.job.Stage) + "-" + suffix(), RunDir: runDir, WorkDir: stage.WorkDir}, nil
}

// suffix is five characters that keep one submission's names apart from
// another's, as Kubernetes' generateName does.
func suffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// setRef records the Job and reports whether the run was stopped
// meanwhile.
func (r *Run) setRef(ref Ref) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ref = &ref
	return r.stopped
}

func (r *Run) addLog(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logTail = append(r.logTail, line)
	if len(r.logTail) > tailLines {
		r.logTail = r.logTail[len(r.logTail)-tailLines:]
	}
}

// tailLines is how many lines of the container log a diagnostic quotes.
const tailLines = 10

func (r *Run) connectDiagnostic(err error) api.Diagnostic {
	return api.Diagnostic{Severity: api.Error, Summary: "Kubernetes cluster unreachable",
		Detail: fmt.Sprintf("gpuflow could not connect to the cluster of %s: %s. Check kubeconfig and context there, or $KUBECONFIG; `kubectl cluster-info` must work from this machine.", r.job.Executor, err)}
}

func lostDiagnostic(ref Ref, err error) api.Diagnostic {
	return api.Diagnostic{Severity: api.Error, Summary: "Lost track of Kubernetes " + ref.Kind + " " + ref.Name,
		Detail: fmt.Sprintf("gpuflow could no longer ask the API server about %s %s/%s (%s). It may still be running: `kubectl get %s -n %s %s` shows it, `kubectl delete %s -n %s %s --cascade=foreground` ends it.",
			ref.Kind, ref.Namespace, ref.Name, err, kubectlKind(ref.Kind), ref.Namespace, ref.Name, kubectlKind(ref.Kind), ref.Namespace, ref.Name)}
}

func kubectlKind(kind string) string {
	if kind == KindJobSet {
		return "jobsets.jobset.x-k8s.io"
	}
	return "job"
}

func logEvent(level, msg string) api.Event {
	return api.Event{Time: time.Now(), Log: &api.Log{Level: level, Message: msg}}
}

// lockedSink lets the log streams of several pods and the follower send
// events at once.
type lockedSink struct {
	mu   sync.Mutex
	sink api.EventSink
}

func (s *lockedSink) Send(e api.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sink.Send(e)
}

// provider is the api.Provider face of a Run. Only ApplyStage and Stop
// mean anything: plans are made locally, by the plugin itself.
type provider struct{ r *Run }

var errApplyOnly = errors.New("a Kubernetes run only applies a stage; schemas and plans come from the local plugin")

func (p provider) Schema(context.Context) (*api.Schema, error) { return nil, errApplyOnly }
func (p provider) ValidateStage(context.Context, *api.StageRequest) (api.Diagnostics, error) {
	return nil, errApplyOnly
}
func (p provider) PlanStage(context.Context, *api.StageRequest) (*api.PlanResponse, error) {
	return nil, errApplyOnly
}
func (p provider) ApplyStage(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	return p.r.apply(ctx, req, sink)
}
func (p provider) Stop(context.Context) error { return p.r.stop() }
