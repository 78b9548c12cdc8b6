package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/dag"
	"github.com/gpuflow/gpuflow/engine/executor/kubernetes"
	"github.com/gpuflow/gpuflow/engine/executor/slurm"
	"github.com/gpuflow/gpuflow/engine/state"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// Defaults of ApplyOptions.
const (
	DefaultParallelism = 4
	DefaultStopGrace   = 10 * time.Second
)

// ApplyOptions say how to run a plan.
type ApplyOptions struct {
	// Plugins supply the stage schemas, as for planning.
	Plugins Plugins
	// Launcher starts a plugin process for each stage run.
	Launcher Launcher
	// State is the locked state file the apply records into.
	State *StateFile
	// RunsDir is where each run's log and events go (RunsDir/STAGE/RUN-ID).
	RunsDir string
	// Parallelism bounds how many stages run at once (DefaultParallelism
	// when zero).
	Parallelism int
	// StopGrace is how long a stopped stage may take to end before its
	// plugin process is killed (DefaultStopGrace when zero).
	StopGrace time.Duration
	// StageTimeout stops any stage that runs longer; zero means no limit.
	StageTimeout time.Duration
	// Observer is told what happens as it happens; nil for nobody.
	Observer ApplyObserver
	// CalibrationPath is the calibration file that measured figures from
	// succeeded stages are filed in; empty files nothing.
	CalibrationPath string
	// Slurm configures the runs of stages whose executor is Slurm; the
	// zero value runs the Slurm commands found on $PATH.
	Slurm slurm.Options
	// Kubernetes configures the runs of stages whose executor is
	// Kubernetes; the zero value connects as the plan's kubeconfig says.
	Kubernetes kubernetes.Options
}

// ApplyObserver follows an apply, for a live display. Its methods are called
// from several goroutines at once.
type ApplyObserver interface {
	// StageStarted: the stage's plugin process is being started.
	StageStarted(sp *StagePlan, at time.Time)
	// StageEvent: a running stage reported an event.
	StageEvent(address string, e api.Event)
	// StageFinished: the stage ended, or was found unchanged or skipped.
	StageFinished(r *StageResult)
}

// Outcomes of a stage in an apply.
const (
	OutcomeSucceeded   = "succeeded"
	OutcomeFailed      = "failed"
	OutcomeInterrupted = "interrupted"
	// OutcomeSkipped: not run because something it needs did not succeed,
	// or the apply was interrupted before it could start.
	OutcomeSkipped = "skipped"
	// OutcomeUnchanged: not run because its inputs match a succeeded run.
	OutcomeUnchanged = "unchanged"
)

// StageResult is how one stage of the plan fared.
type StageResult struct {
	Address string
	Outcome string
	// Reason says why in one sentence (empty for a plain success).
	Reason    string
	StartedAt time.Time
	EndedAt   time.Time
	RunID     string
	LogPath   string
	// Diagnostics are the plugin's (pointing into the stage body) and the
	// engine's own about this stage.
	Diagnostics hcl.Diagnostics
	Outputs     map[string]json.RawMessage
	// Plan is what the plan predicted for a training stage that ran.
	Plan *state.Prediction
}

// Duration is how long the stage ran; zero for one that did not run.
func (r *StageResult) Duration() time.Duration {
	if r.StartedAt.IsZero() || r.EndedAt.IsZero() {
		return 0
	}
	return r.EndedAt.Sub(r.StartedAt)
}

// ApplyResult is how a whole apply fared.
type ApplyResult struct {
	// Stages are in plan order.
	Stages []*StageResult
	// Outputs are the workload's outputs, evaluated with what ran.
	Outputs []PlanOutput
}

// Count returns how many stages had the outcome.
func (r *ApplyResult) Count(outcome string) int {
	n := 0
	for _, s := range r.Stages {
		if s.Outcome == outcome {
			n++
		}
	}
	return n
}

// OK reports whether every stage succeeded or was unchanged.
func (r *ApplyResult) OK() bool {
	return r.Count(OutcomeSucceeded)+r.Count(OutcomeUnchanged) == len(r.Stages)
}

// Apply runs the plan's stages, each after what it depends on, up to
// opts.Parallelism at once and never two that claim the same GPUs at once.
// Every stage runs in a plugin process of its own; its outputs flow into
// the stages that read them, and state is written after each stage. A
// failed stage's dependents are skipped. Cancelling ctx stops the running
// stages (Stop, then a kill after opts.StopGrace) and records them as
// interrupted. Diagnostics are returned for problems that keep the apply
// from starting at all; how each stage fared is in the result.
func Apply(ctx context.Context, plan *Plan, w *Workload, opts ApplyOptions) (*ApplyResult, hcl.Diagnostics) {
	a, diags := newApplier(ctx, plan, w, opts)
	if diags.HasErrors() {
		return nil, diags
	}
	// The walk itself is unbounded: a stage takes one of opts.Parallelism
	// slots only once it holds its GPUs (runStage), so stages waiting for
	// GPUs, and unchanged ones, never keep others from running.
	a.graph.Walk(ctx, max(1, len(plan.Stages)), a.visit)
	return a.finish(ctx), diags
}

// applier carries one apply.
type applier struct {
	plan   *Plan
	w      *Workload
	opts   ApplyOptions
	byAddr map[string]*StagePlan
	nodes  map[string]*stageNode
	graph  *dag.Graph
	prior  *state.State
	claims *claimLocks
	// slots holds a token per running stage, up to opts.Parallelism.
	slots chan struct{}
	// canStop is keyed by plugin name: whether its Stop ends a running
	// apply (else stopping a stage is a kill).
	canStop map[string]bool

	calibration *calibrator
	// cwd is the folder gpuflow runs in: plugins are given the workload's
	// folder and their run folders as absolute paths, so that whatever
	// folder a plugin's own processes run in, the paths it is given and
	// the paths it outputs mean the same.
	cwd string

	mu      sync.Mutex
	eval    *planner // for evalContext; guarded by mu
	results map[string]*StageResult
}

func newApplier(ctx context.Context, plan *Plan, w *Workload, opts ApplyOptions) (*applier, hcl.Diagnostics) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = DefaultParallelism
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = DefaultStopGrace
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot find the working folder",
			Detail: fmt.Sprintf("Reading the current folder failed: %s. Run gpuflow from a folder that exists.", err)}}
	}
	nodes, _, diags := w.analyseStages(ctx, opts.Plugins)
	if diags.HasErrors() {
		return nil, diags
	}
	a := &applier{cwd: cwd, plan: plan, w: w, opts: opts, byAddr: map[string]*StagePlan{}, nodes: nodes, graph: dag.New(),
		prior: opts.State.Snapshot(), claims: newClaimLocks(), calibration: &calibrator{path: opts.CalibrationPath}, slots: make(chan struct{}, opts.Parallelism), canStop: map[string]bool{}, results: map[string]*StageResult{}}
	for _, sp := range plan.Stages {
		a.byAddr[sp.Address] = sp
		a.graph.Add(sp.Address)
		diags = append(diags, a.checkPlugin(ctx, sp)...)
	}
	for _, e := range plan.Edges {
		a.graph.Connect(e[0], e[1])
	}
	a.eval = &planner{w: w, opts: PlanOptions{Plugins: opts.Plugins, State: a.prior}, nodes: nodes,
		stageValues: map[string]cty.Value{}, plans: a.byAddr}
	return a, diags
}

// abs is path, relative to the folder gpuflow runs in, made absolute.
func (a *applier) abs(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(a.cwd, path)
}

// checkPlugin makes sure the stage is still served by the plugin the plan
// was made with, and learns whether that plugin can stop a running stage.
func (a *applier) checkPlugin(ctx context.Context, sp *StagePlan) hcl.Diagnostics {
	n := a.nodes[sp.Address]
	if n == nil || n.plugin == nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Stage no longer in the workload",
			Detail: fmt.Sprintf("The plan runs stage %s, but the workload no longer declares it. Plan again.", sp.Address)}}
	}
	if n.plugin.Name != sp.Plugin.Name || n.plugin.Version != sp.Plugin.Version {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Plugin changed since the plan",
			Detail: fmt.Sprintf("The plan runs stage %s with plugin %s %s, but %s %s serves it now. Plan again.",
				sp.Address, sp.Plugin.Name, sp.Plugin.Version, n.plugin.Name, n.plugin.Version),
			Subject: n.cfg.TypeRange.Ptr()}}
	}
	if _, known := a.canStop[n.plugin.Name]; known {
		return nil
	}
	schema, err := n.plugin.Provider.Schema(ctx)
	a.canStop[n.plugin.Name] = err == nil && schema.HasCapability(api.CapabilityStop)
	return nil
}

// visit runs one stage for the walk.
func (a *applier) visit(ctx context.Context, addr string) dag.Outcome {
	r := a.runStage(ctx, a.byAddr[addr])
	a.mu.Lock()
	a.results[addr] = r
	a.mu.Unlock()
	a.opts.Observer.StageFinished(r)
	if r.Outcome == OutcomeSucceeded || r.Outcome == OutcomeUnchanged {
		return dag.Succeeded
	}
	return dag.Failed
}

// finish reports the stages the walk never visited as skipped, and
// gathers the results in plan order.
func (a *applier) finish(ctx context.Context) *ApplyResult {
	res := &ApplyResult{}
	for _, sp := range a.plan.Stages {
		r := a.results[sp.Address]
		if r == nil {
			r = &StageResult{Address: sp.Address, Outcome: OutcomeSkipped, Reason: a.skipReason(ctx, sp)}
			a.results[sp.Address] = r
			a.opts.Observer.StageFinished(r)
		}
		res.Stages = append(res.Stages, r)
	}
	// Outputs of stages that failed or were left out stay unknown; apply
	// reports the stages' own errors instead.
	res.Outputs, _ = a.eval.outputs()
	return res
}

// skipReason names the first dependency that did not succeed. Stages are
// visited in plan order, which is topological, so that dependency's own
// result (or skip) is already known.
func (a *applier) skipReason(ctx context.Context, sp *StagePlan) string {
	for _, dep := range a.graph.DependsOn(sp.Address) {
		if r := a.results[dep]; r != nil && r.Outcome != OutcomeSucceeded && r.Outcome != OutcomeUnchanged {
			return fmt.Sprintf("stage.%s %s", dep, r.Outcome)
		}
	}
	if ctx.Err() != nil {
		return "the apply was interrupted before it started"
	}
	return "a stage it depends on did not succeed"
}

type nopObserver struct{}

func (nopObserver) StageStarted(*StagePlan, time.Time) {}
func (nopObserver) StageEvent(string, api.Event)       {}
func (nopObserver) StageFinished(*StageResult)         {}
