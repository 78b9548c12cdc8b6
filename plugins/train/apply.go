package train

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// DefaultStopGrace is how long a stopped run has between SIGTERM and
// SIGKILL: the trainer finishes its step and writes a checkpoint. It
// matches the grace torchrun itself gives its workers.
const DefaultStopGrace = 30 * time.Second

// hostGoneGrace is the grace when the host goes away: the plugin process
// is about to be killed, and the kernel then sends torchrun SIGTERM anyway.
const hostGoneGrace = time.Second

// apply runs one stage: prepare, check, launch, watch, and judge.
func apply(ctx context.Context, req *api.ApplyRequest, sink api.EventSink, opts Options) *api.ApplyResponse {
	launch, diags := Prepare(req, opts)
	if diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}
	}
	env := launch.Environ(os.Environ())
	report, d := preflight(ctx, launch, env)
	if diags = append(diags, d...); diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}
	}
	mon := newMonitor(sink)
	mon.log("info", report.describe())
	if r := launch.Config.ResumeFrom; r != "" {
		mon.log("info", "resuming from "+r)
	}
	mon.log("info", strings.Join(launch.Torchrun.Argv(), " "))
	status, err := runLauncher(ctx, launch.Torchrun.Argv(), env, launch.RunDir, launch.RunDir, mon, grace(opts))
	for _, name := range []string{"stdout.log", "stderr.log"} {
		sendArtifact(sink, name, filepath.Join(launch.RunDir, name))
	}
	outputs, d := judge(ctx, launch, status, err, mon)
	return &api.ApplyResponse{Outputs: outputs, Diagnostics: append(diags, d...)}
}

// grace picks the time between SIGTERM and SIGKILL by why the run ends.
func grace(opts Options) func(error) time.Duration {
	return func(cause error) time.Duration {
		if !errors.Is(cause, sdk.ErrStopped) {
			return hostGoneGrace
		}
		if opts.StopGrace > 0 {
			return opts.StopGrace
		}
		return DefaultStopGrace
	}
}

// judge turns how the launcher ended into outputs or diagnostics.
func judge(ctx context.Context, l *Launch, status exitStatus, err error, mon *monitor) (map[string]cty.Value, api.Diagnostics) {
	mon.mu.Lock()
	defer mon.mu.Unlock()
	switch {
	case err != nil:
		return nil, launchFailed(err)
	case mon.result != nil && status.Code == 0:
		if err := finishExports(l.Config); err != nil {
			return nil, api.Diagnostics{{Severity: api.Error, Summary: "Export failed", Path: cty.GetAttrPath("export"),
				Detail: fmt.Sprintf("Training finished, but %v. Its checkpoint is %s; the next apply exports again.", err, mon.result.Checkpoint)}}
		}
		return outputs(l.Config, mon.result), nil
	case ctx.Err() != nil:
		return nil, api.Diagnostics{stoppedDiagnostic(ctx, mon)}
	case len(mon.errors) > 0:
		var diags api.Diagnostics
		for _, e := range mon.errors {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: e.Summary, Detail: e.Detail})
		}
		return nil, diags
	case mon.stopped != nil:
		return nil, api.Diagnostics{stoppedDiagnostic(ctx, mon)}
	}
	return nil, api.Diagnostics{{Severity: api.Error, Summary: "Training failed", Detail: failureDetail(status, mon)}}
}

func stoppedDiagnostic(ctx context.Context, mon *monitor) api.Diagnostic {
	why := "was stopped by a signal from outside gpuflow"
	switch {
	case errors.Is(context.Cause(ctx), sdk.ErrStopped):
		why = "was stopped"
	case ctx.Err() != nil:
		why = "was interrupted"
	}
	detail := fmt.Sprintf("The training run %s at step %d.", why, mon.lastStep)
	if mon.checkpoint != "" {
		detail += fmt.Sprintf(" Its last checkpoint is %s; the next apply resumes from it.", mon.checkpoint)
	} else {
		detail += " It wrote no checkpoint, so the next apply starts from the beginning."
	}
	return api.Diagnostic{Severity: api.Error, Summary: "Training stopped", Detail: detail}
}

func failureDetail(status exitStatus, mon *monitor) string {
	how := fmt.Sprintf("exited with status %d", status.Code)
	if status.Signal != "" {
		how = "was killed by " + status.Signal
	}
	detail := fmt.Sprintf("torchrun %s after step %d without reporting a result.", how, mon.lastStep)
	if len(mon.stderrTail) > 0 {
		detail += " The last lines on stderr:\n  " + strings.Join(mon.stderrTail, "\n  ")
	}
	return detail + "\nThe full output is in stdout.log and stderr.log in the run's folder."
}

// outputs are the stage's outputs; the engine files tokens_per_s and
// peak_memory_bytes as calibration.
func outputs(c runConfig, r *trainerResult) map[string]cty.Value {
	perRank := make([]cty.Value, len(r.PeakMemoryBytesPerRank))
	for i, b := range r.PeakMemoryBytesPerRank {
		perRank[i] = cty.NumberIntVal(b)
	}
	ranks := cty.ListValEmpty(cty.Number)
	if len(perRank) > 0 {
		ranks = cty.ListVal(perRank)
	}
	out := map[string]cty.Value{
		"checkpoint":                 cty.StringVal(r.Checkpoint),
		"checkpoint_dir":             cty.StringVal(c.CheckpointDir),
		"final_loss":                 cty.NumberFloatVal(r.FinalLoss),
		"tokens_per_s":               cty.NumberFloatVal(r.TokensPerS),
		"mfu":                        cty.NumberFloatVal(r.MFU),
		"peak_memory_bytes":          cty.NumberIntVal(r.PeakMemoryBytes),
		"peak_memory_bytes_per_rank": ranks,
		"peak_allocated_bytes":       cty.NumberIntVal(r.PeakAllocatedBytes),
		"steps":                      cty.NumberIntVal(r.Steps),
		"tokens":                     cty.NumberIntVal(r.Tokens),
		"resumed_from_step":          cty.NumberIntVal(r.ResumedFromStep),
		"hf":                         cty.StringVal(c.ExportHF),
		"peft":                       cty.StringVal(c.ExportPEFT),
	}
	if r.ValidLoss != nil && r.ValidPerplexity != nil {
		out["valid_loss"] = cty.NumberFloatVal(*r.ValidLoss)
		out["valid_perplexity"] = cty.NumberFloatVal(*r.ValidPerplexity)
	}
	if r.LossScale != nil && r.SkippedSteps != nil {
		out["loss_scale"] = cty.NumberFloatVal(*r.LossScale)
		out["skipped_steps"] = cty.NumberIntVal(*r.SkippedSteps)
	}
	if c.Type == "finetune" {
		out["adapters"] = cty.StringVal(r.Adapters)
		out["merged"] = cty.StringVal(r.Merged)
	}
	return out
}

func sendArtifact(sink api.EventSink, name, path string) {
	st, err := os.Stat(path)
	if err != nil {
		return
	}
	sink.Send(api.Event{Time: time.Now(), Artifact: &api.Artifact{Name: name, Path: path, Bytes: st.Size()}})
}
