package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/runlog"
	"github.com/gpuflow/gpuflow/engine/state"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// runStage decides whether the stage must run now that its upstream
// outputs are known, and runs it if so.
func (a *applier) runStage(ctx context.Context, sp *StagePlan) *StageResult {
	if sp.Action == ActionNoOp {
		return a.unchanged(sp, "unchanged since the last apply")
	}
	n := a.nodes[sp.Address]
	config, diags := a.decode(n)
	if diags.HasErrors() {
		return failedResult(sp, "its configuration cannot be evaluated", diags)
	}
	config = bindLayout(config, sp)
	if !config.IsWhollyKnown() {
		return failedResult(sp, "some of its inputs are still unknown after the stages it depends on ran", nil)
	}
	files, fdiags := inputFiles(n, config, a.w.Config.Dir)
	if fdiags.HasErrors() {
		return failedResult(sp, "a file it reads cannot be hashed", fdiags)
	}
	hash := InputHash(sp.Plugin, sp.Type, config, files)
	if a.cacheHit(sp, hash) {
		return a.unchanged(sp, "inputs match the last successful run")
	}
	release, err := a.claims.acquire(ctx, claimKey(sp))
	defer release()
	if err != nil {
		return &StageResult{Address: sp.Address, Outcome: OutcomeSkipped, Reason: "the apply was interrupted while it waited for its GPUs"}
	}
	select {
	case a.slots <- struct{}{}:
		defer func() { <-a.slots }()
	case <-ctx.Done():
		return &StageResult{Address: sp.Address, Outcome: OutcomeSkipped, Reason: "the apply was interrupted before it started"}
	}
	return a.execute(ctx, sp, n, config, hash)
}

// decode evaluates the stage body and its meta-arguments with the outputs
// known so far.
func (a *applier) decode(n *stageNode) (cty.Value, hcl.Diagnostics) {
	a.mu.Lock()
	ctx := a.eval.evalContext(n)
	a.mu.Unlock()
	config, diags := hcldec.Decode(n.cfg.Body, n.spec, ctx)
	if diags.HasErrors() {
		return config, diags
	}
	config, udiags := withUses(n, config, ctx)
	return config, append(diags, udiags...)
}

// cacheHit: the stage was planned to run because its inputs were unknown,
// but they came out as they were when it last succeeded.
func (a *applier) cacheHit(sp *StagePlan, hash string) bool {
	if a.prior == nil || slices.ContainsFunc(a.plan.Replace, func(r string) bool { return normalizeAddr(r) == sp.Address }) {
		return false
	}
	prior := a.prior.Stages[sp.Address]
	return prior != nil && prior.Status == state.StatusSucceeded && prior.InputHash == hash
}

// unchanged passes the recorded outputs downstream without running.
func (a *applier) unchanged(sp *StagePlan, reason string) *StageResult {
	r := &StageResult{Address: sp.Address, Outcome: OutcomeUnchanged, Reason: reason}
	if a.prior != nil && a.prior.Stages[sp.Address] != nil {
		r.Outputs = a.prior.Stages[sp.Address].Outputs
	}
	if err := a.publish(sp.Address, r.Outputs); err != nil {
		return failedResult(sp, fmt.Sprintf("its recorded outputs cannot be read (%s); run it again with -replace %s", err, sp.Address), nil)
	}
	return r
}

// publish makes a stage's outputs visible to the stages that read them,
// as the planner shows them: stage.TYPE.NAME.outputs and .address.
func (a *applier) publish(addr string, outputs map[string]json.RawMessage) error {
	v, err := OutputsValue(outputs)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.eval.stageValues[addr] = cty.ObjectVal(map[string]cty.Value{"outputs": v, "address": cty.StringVal(addr)})
	return nil
}

func failedResult(sp *StagePlan, reason string, diags hcl.Diagnostics) *StageResult {
	return &StageResult{Address: sp.Address, Outcome: OutcomeFailed, Reason: reason, Diagnostics: diags}
}

// execute runs the stage in a fresh plugin process, recording it in state
// as running first and with its outcome after.
func (a *applier) execute(ctx context.Context, sp *StagePlan, n *stageNode, config cty.Value, hash string) *StageResult {
	r := &StageResult{Address: sp.Address, StartedAt: time.Now()}
	run, err := runlog.Create(a.opts.RunsDir, sp.Address, r.StartedAt)
	if err != nil {
		return failedResult(sp, fmt.Sprintf("its run directory cannot be created: %s", err), nil)
	}
	r.RunID, r.LogPath = run.ID, run.LogPath()
	cfg, _ := configJSON(config)
	if err := run.WriteInputs(runlog.Inputs{InputHash: hash, Config: cfg}); err != nil {
		run.Close()
		return failedResult(sp, fmt.Sprintf("its run directory cannot be written: %s", err), nil)
	}
	rec := &state.Stage{Address: sp.Address, Status: state.StatusRunning, InputHash: hash,
		Plugin: state.Plugin{Name: sp.Plugin.Name, Version: sp.Plugin.Version}, Config: cfg,
		StartedAt: r.StartedAt, LogPath: r.LogPath, Plan: prediction(sp.Estimate)}
	if err := a.record(rec); err != nil {
		run.Close()
		return failedResult(sp, fmt.Sprintf("state cannot be written: %s", err), nil)
	}
	a.opts.Observer.StageStarted(sp, r.StartedAt)
	run.Note(r.StartedAt, fmt.Sprintf("stage %s started (run %s, plugin %s %s)", sp.Address, run.ID, sp.Plugin.Name, sp.Plugin.Version))
	metrics := &metricSummary{}
	a.invoke(ctx, sp, n, config, run, metrics, r, rec)
	r.EndedAt = time.Now()
	run.Note(r.EndedAt, fmt.Sprintf("stage %s %s after %s%s", sp.Address, r.Outcome, r.Duration().Round(time.Millisecond), reasonTail(r.Reason)))
	if err := run.Close(); err != nil && r.Outcome == OutcomeSucceeded {
		r.Outcome, r.Reason = OutcomeFailed, fmt.Sprintf("its run log cannot be written: %s", err)
	}
	rec.Status, rec.Outputs, rec.Metrics, rec.EndedAt = stateStatus(r.Outcome), r.Outputs, metrics.snapshot(), r.EndedAt
	if r.Outcome != OutcomeSucceeded {
		rec.Error, rec.Outputs = r.errorText(), nil
	}
	if err := a.record(rec); err != nil {
		r.Outcome, r.Reason = OutcomeFailed, fmt.Sprintf("state cannot be written: %s", err)
	}
	r.Plan = rec.Plan
	return r
}

func reasonTail(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// errorText is what state records about a stage that did not succeed.
func (r *StageResult) errorText() string {
	parts := []string{r.Reason}
	for _, d := range r.Diagnostics {
		if d.Severity == hcl.DiagError {
			parts = append(parts, strings.TrimSpace(d.Summary+": "+d.Detail))
		}
	}
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), "; ")
}

func stateStatus(outcome string) string {
	switch outcome {
	case OutcomeSucceeded:
		return state.StatusSucceeded
	case OutcomeInterrupted:
		return state.StatusInterrupted
	}
	return state.StatusFailed
}

// record writes one stage's record into state.
func (a *applier) record(rec *state.Stage) error {
	c := *rec
	return a.opts.State.Update(func(s *state.State) { s.Stages[c.Address] = &c })
}

// invoke starts the plugin process, applies the stage and fills r with the
// outcome, outputs and diagnostics.
func (a *applier) invoke(ctx context.Context, sp *StagePlan, n *stageNode, config cty.Value, run *runlog.Run, metrics *metricSummary, r *StageResult, rec *state.Stage) {
	proc, err := a.launcher(sp, rec).Launch(ctx, n.plugin)
	if err != nil {
		r.Outcome, r.Reason = OutcomeFailed, fmt.Sprintf("plugin %s did not start: %s", n.plugin.Name, err)
		if ctx.Err() != nil {
			r.Outcome, r.Reason = OutcomeInterrupted, "the apply was interrupted while its plugin started"
		}
		return
	}
	defer proc.Kill()
	req := &api.ApplyRequest{
		StageRequest: api.StageRequest{Type: sp.Type, Name: sp.Name, Config: config, WorkDir: a.abs(a.w.Config.Dir), Env: envMap(sp.NCCLEnv)},
		RunDir:       a.abs(run.Dir),
	}
	sink := api.EventSinkFunc(func(e api.Event) {
		if e.Time.IsZero() {
			e.Time = time.Now()
		}
		run.Record(e)
		if e.Metric != nil {
			metrics.add(e.Metric)
		}
		a.opts.Observer.StageEvent(sp.Address, e)
	})
	res, stopped := a.call(ctx, proc, n.plugin, req, sink)
	a.judge(sp, n, proc, res, stopped, r)
}

// Why a stage was stopped before it returned.
const (
	stoppedNot         = ""
	stoppedInterrupted = "interrupted"
	stoppedTimeout     = "timeout"
)

type callResult struct {
	resp *api.ApplyResponse
	err  error
}

// killWait bounds the wait for a call to return once its plugin process
// was killed (the connection breaks at once; an in-process provider that
// ignores its context is abandoned).
const killWait = 5 * time.Second

// call runs ApplyStage until it returns, or until ctx ends or the stage
// times out; then it stops the stage (Stop, a grace period, a kill).
func (a *applier) call(ctx context.Context, proc PluginProcess, p *Plugin, req *api.ApplyRequest, sink api.EventSink) (callResult, string) {
	// The call outlives ctx: a stopped stage still reports how it ended.
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan callResult, 1)
	go func() {
		resp, err := proc.Provider().ApplyStage(callCtx, req, sink)
		done <- callResult{resp, err}
	}()
	var timeout <-chan time.Time
	if a.opts.StageTimeout > 0 {
		t := time.NewTimer(a.opts.StageTimeout)
		defer t.Stop()
		timeout = t.C
	}
	why := stoppedNot
	select {
	case res := <-done:
		return res, why
	case <-ctx.Done():
		why = stoppedInterrupted
	case <-timeout:
		why = stoppedTimeout
	}
	if a.canStop[p.Name] {
		if res, ok := a.askToStop(proc, done); ok {
			return res, why
		}
	}
	proc.Kill()
	cancel()
	select {
	case res := <-done:
		return res, why
	case <-time.After(killWait):
		return callResult{err: errors.New("the plugin did not return after its process was killed")}, why
	}
}

// askToStop sends Stop and waits up to the grace period for the call to
// return.
func (a *applier) askToStop(proc PluginProcess, done <-chan callResult) (callResult, bool) {
	stopCtx, cancel := context.WithTimeout(context.Background(), a.opts.StopGrace)
	defer cancel()
	go proc.Provider().Stop(stopCtx) // its error changes nothing: the kill follows
	select {
	case res := <-done:
		return res, true
	case <-stopCtx.Done():
		return callResult{}, false
	}
}

// judge turns what the call returned into the stage's outcome.
func (a *applier) judge(sp *StagePlan, n *stageNode, proc PluginProcess, res callResult, stopped string, r *StageResult) {
	if res.err == nil && res.resp != nil {
		r.Diagnostics = useDiags(n, res.resp.Diagnostics)
	}
	switch {
	case stopped == stoppedInterrupted:
		r.Outcome, r.Reason = OutcomeInterrupted, "the apply was interrupted and the stage stopped"
	case stopped == stoppedTimeout:
		r.Outcome, r.Reason = OutcomeFailed, fmt.Sprintf("it ran past the stage timeout of %s and was stopped", a.opts.StageTimeout)
	case res.err != nil && proc.Exited():
		r.Outcome, r.Reason = OutcomeFailed, fmt.Sprintf("plugin %s exited unexpectedly", n.plugin.Name)
		r.Diagnostics = append(r.Diagnostics, crashDiagnostic(n, res.err, proc.StderrTail()))
	case res.err != nil:
		r.Outcome, r.Reason = OutcomeFailed, fmt.Sprintf("plugin %s failed: %s", n.plugin.Name, res.err)
	case res.resp == nil:
		r.Outcome, r.Reason = OutcomeFailed, fmt.Sprintf("plugin %s returned no result", n.plugin.Name)
	case r.Diagnostics.HasErrors():
		r.Outcome, r.Reason = OutcomeFailed, firstError(r.Diagnostics)
	default:
		a.succeed(sp, res.resp.Outputs, r)
	}
}

// firstError is the summary of the first error, as the reason in one line.
func firstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			return d.Summary
		}
	}
	return ""
}

// succeed records the outputs as state will hold them, and passes them on
// in that same form, so a later plan hashes what this apply hashed.
func (a *applier) succeed(sp *StagePlan, outputs map[string]cty.Value, r *StageResult) {
	enc, err := EncodeOutputs(outputs)
	if err == nil {
		err = a.publish(sp.Address, enc)
	}
	if err != nil {
		r.Outcome, r.Reason = OutcomeFailed, fmt.Sprintf("its outputs cannot be recorded: %s", err)
		return
	}
	r.Outcome, r.Outputs = OutcomeSucceeded, enc
	if sp.Hardware != nil {
		if err := a.calibration.record(a.w.Hardware[sp.Hardware.Name], sp, outputs); err != nil {
			r.Diagnostics = append(r.Diagnostics, calibrationWarning(a.calibration.path, err))
		}
	}
}

// crashDiagnostic reports a plugin process that died mid-stage with the
// last lines it wrote, where a panic or a fatal signal shows. A launcher's
// error may already quote those lines; they are not repeated then.
func crashDiagnostic(n *stageNode, err error, tail []string) *hcl.Diagnostic {
	msg := err.Error()
	detail := fmt.Sprintf("The plugin process running stage %s ended before the stage did: %s.", n.cfg.Addr(), msg)
	if len(tail) > 0 && !strings.Contains(msg, tail[len(tail)-1]) {
		detail += "\nIts last lines on stderr:\n  " + strings.Join(tail, "\n  ")
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Plugin crashed", Detail: detail, Subject: n.cfg.DeclRange.Ptr()}
}
