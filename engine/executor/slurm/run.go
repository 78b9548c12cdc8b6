package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// Options configure how stages run through Slurm. The zero value works.
type Options struct {
	// Runner runs the Slurm commands. Default: ExecRunner.
	Runner Runner
	// Executable is the gpuflow the nodes run; it must be at this path on
	// every node. Default: os.Executable().
	Executable string
	// Poll is how often squeue is asked about a job. Default 3s: often
	// enough to notice the end soon, rare enough for a busy slurmctld.
	Poll time.Duration
	// Tail is how often the nodes' event files are read. Default 250ms.
	Tail time.Duration
	// AccountingWait bounds the wait for sacct's record of a job squeue
	// says has ended (slurmdbd records it a moment later). Default 30s.
	AccountingWait time.Duration
}

func (o *Options) setDefaults() {
	if o.Runner == nil {
		o.Runner = ExecRunner{}
	}
	if o.Executable == "" {
		o.Executable, _ = os.Executable()
	}
	if o.Poll <= 0 {
		o.Poll = 3 * time.Second
	}
	if o.Tail <= 0 {
		o.Tail = 250 * time.Millisecond
	}
	if o.AccountingWait <= 0 {
		o.AccountingWait = 30 * time.Second
	}
}

// Run is one stage run through Slurm. For the engine it stands where a
// plugin process stands for a local run: Provider().ApplyStage submits the
// script and follows the job to its end, Stop and Kill cancel it.
type Run struct {
	job    Job
	script string
	opts   Options

	mu      sync.Mutex
	jobID   string // the job now submitted, "" before the first
	runDir  string
	stopped bool // Stop or Kill: no more jobs, and the current one cancelled
	ended   bool // the last job has ended, or none will be submitted
	// stopCh is closed by the first Stop or Kill, so that the job's end
	// is looked for at once.
	stopCh chan struct{}
}

// NewRun prepares a run of script, rendered from job; nothing is submitted
// until ApplyStage.
func NewRun(job Job, script string, opts Options) *Run {
	opts.setDefaults()
	return &Run{job: job, script: script, opts: opts, stopCh: make(chan struct{})}
}

// Provider answers the engine's ApplyStage and Stop for this run.
func (r *Run) Provider() api.Provider { return provider{r} }

// Exited reports whether the run's last job has ended.
func (r *Run) Exited() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended
}

// StderrTail returns the last lines the current job's batch script wrote.
func (r *Run) StderrTail() []string {
	r.mu.Lock()
	id, dir := r.jobID, r.runDir
	r.mu.Unlock()
	if id == "" {
		return nil
	}
	return fileTail(batchOutput(dir, id), tailLines)
}

// Kill cancels the job at once; it does nothing once the job has ended.
func (r *Run) Kill() { r.stop() }

// stop cancels the current job, and keeps any further one from starting.
func (r *Run) stop() error {
	r.mu.Lock()
	if !r.stopped {
		close(r.stopCh)
	}
	r.stopped = true
	id, ended := r.jobID, r.ended
	r.mu.Unlock()
	if id == "" || ended {
		return nil
	}
	ctx, done := context.WithTimeout(context.Background(), cancelTimeout)
	defer done()
	return cancel(ctx, r.opts.Runner, id)
}

// cancelTimeout bounds a scancel, so that an unanswering slurmctld cannot
// hold up a stop.
const cancelTimeout = 30 * time.Second

func batchOutput(runDir, jobID string) string {
	return filepath.Join(runDir, "slurm-"+jobID+".out")
}

// apply runs the stage: it writes the request and the script into the run
// directory, then submits the script until a job ends in a way a retry
// would not change.
func (r *Run) apply(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	defer r.markEnded()
	runDir, err := r.prepare(req)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		o, results, diags := r.runJob(ctx, runDir, sink)
		if ctx.Err() != nil {
			return nil, ctx.Err() // the engine gave up on the run; Kill cancelled the job
		}
		if diags != nil {
			return &api.ApplyResponse{Diagnostics: diags}, nil
		}
		if o.Retryable() && attempt <= r.job.Retries && !r.isStopped() {
			sink.Send(logEvent("warn", fmt.Sprintf("Slurm job %s ended in state %s; submitting the stage again (retry %d of %d)",
				o.JobID, o.State, attempt, r.job.Retries)))
			continue
		}
		return r.response(o, results, attempt, runDir), nil
	}
}

// prepare writes what the job needs into the run directory and returns
// the directory's absolute path, which is what the nodes are told.
func (r *Run) prepare(req *api.ApplyRequest) (string, error) {
	runDir, err := filepath.Abs(req.RunDir)
	if err != nil {
		return "", err
	}
	stage := req.StageRequest
	if stage.WorkDir, err = filepath.Abs(stage.WorkDir); err != nil {
		return "", err
	}
	if err := rundir.WriteRequest(runDir, &rundir.Request{Plugin: r.job.Plugin, Stage: stage}); err != nil {
		return "", fmt.Errorf("writing the stage request: %w", err)
	}
	if err := os.WriteFile(filepath.Join(runDir, ScriptName), []byte(r.script), 0o755); err != nil {
		return "", fmt.Errorf("writing the job script: %w", err)
	}
	r.mu.Lock()
	r.runDir = runDir
	r.mu.Unlock()
	return runDir, nil
}

// runJob submits the script once and follows the job to its end.
// Diagnostics mean no job ran.
func (r *Run) runJob(ctx context.Context, runDir string, sink api.EventSink) (Outcome, []*rundir.Result, api.Diagnostics) {
	if r.isStopped() {
		return Outcome{}, nil, api.Diagnostics{{Severity: api.Error, Summary: "Stage stopped before its Slurm job was submitted",
			Detail: "The stage was stopped before gpuflow submitted its job; nothing ran."}}
	}
	workDir, err := os.Getwd()
	if err != nil {
		return Outcome{}, nil, api.Diagnostics{submitDiagnostic(r.job, err)}
	}
	id, err := submit(ctx, r.opts.Runner, filepath.Join(runDir, ScriptName), workDir, runDir, r.opts.Executable)
	if err != nil {
		return Outcome{}, nil, api.Diagnostics{submitDiagnostic(r.job, err)}
	}
	if r.setJob(id) {
		_ = r.stop() // stopped while sbatch ran
	}
	sink.Send(logEvent("info", fmt.Sprintf("submitted Slurm job %s (%s; batch output in %s)", id, r.job.Executor, batchOutput(runDir, id))))
	f := newFollower(r, id, runDir, sink)
	o, err := f.follow(ctx)
	if err != nil {
		return o, nil, api.Diagnostics{lostDiagnostic(id, err)}
	}
	o.CancelledByUs = r.isStopped()
	return o, f.results(), nil
}

// setJob records the submitted job and reports whether the run was
// stopped meanwhile.
func (r *Run) setJob(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobID = id
	return r.stopped
}

func (r *Run) isStopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

func (r *Run) markEnded() {
	r.mu.Lock()
	r.ended = true
	r.mu.Unlock()
}

func submitDiagnostic(j Job, err error) api.Diagnostic {
	var ce *CommandError
	detail := fmt.Sprintf("sbatch did not accept the job of stage %s: %s.", j.Stage, err)
	switch {
	case errors.As(err, &ce) && ce.NotFound:
		detail = "sbatch is not on $PATH: run gpuflow apply where jobs can be submitted (a login node of the cluster), or start a test cluster with scripts/slurm/setup.sh."
	case errors.As(err, &ce):
		detail += fmt.Sprintf(" Check partition, account, qos and extra_sbatch in %s against `sinfo` and `sacctmgr show associations user=$USER`.", j.Executor)
	}
	return api.Diagnostic{Severity: api.Error, Summary: "Slurm refused the job", Detail: detail}
}

func lostDiagnostic(id string, err error) api.Diagnostic {
	return api.Diagnostic{Severity: api.Error, Summary: "Lost track of Slurm job " + id,
		Detail: fmt.Sprintf("gpuflow could no longer ask Slurm about job %s (%s). The job may still be running: `squeue -j %s` shows it, `scancel %s` ends it.", id, err, id, id)}
}

func logEvent(level, msg string) api.Event {
	return api.Event{Time: time.Now(), Log: &api.Log{Level: level, Message: msg}}
}

// provider is the api.Provider face of a Run. Only ApplyStage and Stop
// mean anything: plans are made locally, by the plugin itself.
type provider struct{ r *Run }

var errApplyOnly = errors.New("a Slurm run only applies a stage; schemas and plans come from the local plugin")

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
