package exec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// Name and Version identify the plugin; the version is part of every exec
// stage's input hash, so it changes when what a stage does could change.
const (
	Name    = "exec"
	Version = "0.1.0"
)

// DefaultStopGrace is how long a command has between SIGTERM and SIGKILL
// when the stage is stopped or times out.
const DefaultStopGrace = 10 * time.Second

// cancelGrace is the grace when the host goes away (its context ends),
// also during a stop's longer grace: it must fit in the two seconds the
// host gives a closing plugin process.
const cancelGrace = time.Second

// Options tune a Provider.
type Options struct {
	// StopGrace replaces DefaultStopGrace when positive.
	StopGrace time.Duration
}

// Provider is the exec plugin. It runs any number of stages at once.
type Provider struct {
	stopGrace time.Duration
	stopper   sdk.Stopper
}

var _ api.Provider = (*Provider)(nil)

// New returns an exec provider.
func New(opts Options) *Provider {
	p := &Provider{stopGrace: opts.StopGrace}
	if p.stopGrace <= 0 {
		p.stopGrace = DefaultStopGrace
	}
	return p
}

// Schema implements api.Provider.
func (p *Provider) Schema(context.Context) (*api.Schema, error) {
	return &api.Schema{
		Name:         Name,
		Version:      Version,
		Capabilities: []string{api.CapabilityStop, api.CapabilityConcurrentApply},
		StageTypes:   map[string]*api.BlockSchema{"exec": stageSchema},
	}, nil
}

// ValidateStage implements api.Provider.
func (p *Provider) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	_, diags := decodeConfig(req.Config)
	return diags, nil
}

// PlanStage implements api.Provider: the details are what will run.
func (p *Provider) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	cfg, diags := decodeConfig(req.Config)
	plan := &api.PlanResponse{Diagnostics: diags}
	config := req.Config
	if config.IsNull() || !config.IsKnown() {
		return plan, nil
	}
	plan.Details = []api.Detail{
		{Key: "command", Value: cfg.knownOr("command", func() string { return commandLine(cfg.Command) })},
		{Key: "dir", Value: cfg.knownOr("dir", func() string { return cfg.workDir(req.WorkDir) })},
	}
	if cfg.Env != nil || cfg.unknown.Attr("env") {
		plan.Details = append(plan.Details, api.Detail{Key: "env", Value: cfg.knownOr("env", func() string { return envNames(cfg.Env) })})
	}
	if cfg.timeoutSet {
		plan.Details = append(plan.Details, api.Detail{Key: "timeout", Value: cfg.knownOr("timeout", cfg.Timeout.String)})
	}
	return plan, nil
}

// knownOr renders an attribute that may be known only at apply time.
func (c config) knownOr(attr string, render func() string) string {
	if c.unknown.Attr(attr) {
		return "(known after apply)"
	}
	return render()
}

func envNames(env map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(env)), ", ")
}

// ApplyStage implements api.Provider.
func (p *Provider) ApplyStage(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	if !req.Config.IsWhollyKnown() {
		return nil, errors.New("exec: the host sent a configuration with unknown values to apply")
	}
	cfg, diags := decodeConfig(req.Config)
	if diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}, nil
	}
	hostGone := ctx.Done()
	ctx, release := p.stopper.Track(ctx)
	defer release()
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, cfg.Timeout, errTimeout)
		defer cancel()
	}
	r := &run{cfg: cfg, req: req, events: sink, grace: p.grace, hostGone: hostGone}
	artifacts, err := r.execute(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range artifacts {
		sink.Send(api.Event{Time: time.Now(), Artifact: a})
	}
	return &api.ApplyResponse{
		Outputs: map[string]cty.Value{
			"exit_code":   cty.NumberIntVal(int64(r.exitCode)),
			"stdout_tail": cty.StringVal(strings.Join(r.stdout.tail, "\n")),
		},
		Diagnostics: append(diags, r.diagnostics(ctx)...),
	}, nil
}

// grace picks the SIGTERM-to-SIGKILL delay for why the command is ended.
func (p *Provider) grace(cause error) time.Duration {
	if errors.Is(cause, sdk.ErrStopped) || errors.Is(cause, errTimeout) {
		return p.stopGrace
	}
	return cancelGrace
}

// Stop implements api.Provider: every running command is ended.
func (p *Provider) Stop(context.Context) error {
	p.stopper.Stop()
	return nil
}

// diagnostics say why a run failed, if it did.
func (r *run) diagnostics(ctx context.Context) api.Diagnostics {
	cmdline := commandLine(r.cfg.Command)
	if r.startErr != nil {
		return api.Diagnostics{r.startDiagnostic()}
	}
	if ctx.Err() != nil {
		return api.Diagnostics{r.endedDiagnostic(context.Cause(ctx), cmdline)}
	}
	switch {
	case r.signal != "":
		return api.Diagnostics{{
			Severity: api.Error,
			Summary:  "Command killed",
			Detail:   fmt.Sprintf("%s was killed by a signal (%s).%s", cmdline, r.signal, r.stderrExcerpt()),
			Path:     cty.GetAttrPath("command"),
		}}
	case r.exitCode != 0:
		return api.Diagnostics{{
			Severity: api.Error,
			Summary:  "Command failed",
			Detail:   fmt.Sprintf("%s exited with status %d.%s", cmdline, r.exitCode, r.stderrExcerpt()),
			Path:     cty.GetAttrPath("command"),
		}}
	}
	return nil
}

func (r *run) startDiagnostic() api.Diagnostic {
	dir := r.cfg.workDir(r.req.WorkDir)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return api.Diagnostic{
			Severity: api.Error,
			Summary:  "Directory not found",
			Detail:   fmt.Sprintf("The command's directory %s is not a directory one can enter; create it or fix dir.", dir),
			Path:     cty.GetAttrPath("dir"),
		}
	}
	if errors.Is(r.startErr, exec.ErrNotFound) || errors.Is(r.startErr, fs.ErrNotExist) {
		return api.Diagnostic{
			Severity: api.Error,
			Summary:  "Program not found",
			Detail:   fmt.Sprintf("Cannot run %q: %v. Give a program on $PATH or a path to it.", r.cfg.Command[0], r.startErr),
			Path:     cty.GetAttrPath("command").IndexInt(0),
		}
	}
	return api.Diagnostic{
		Severity: api.Error,
		Summary:  "Cannot start command",
		Detail:   fmt.Sprintf("Starting %s failed: %v.", commandLine(r.cfg.Command), r.startErr),
		Path:     cty.GetAttrPath("command"),
	}
}

func (r *run) endedDiagnostic(cause error, cmdline string) api.Diagnostic {
	switch {
	case errors.Is(cause, errTimeout):
		return api.Diagnostic{
			Severity: api.Error,
			Summary:  "Timeout reached",
			Detail:   fmt.Sprintf("%s ran longer than its timeout of %s and was stopped.", cmdline, r.cfg.Timeout),
			Path:     cty.GetAttrPath("timeout"),
		}
	case errors.Is(cause, sdk.ErrStopped):
		return api.Diagnostic{
			Severity: api.Error,
			Summary:  "Stage stopped",
			Detail:   fmt.Sprintf("%s was stopped at gpuflow's request before it finished.", cmdline),
		}
	}
	return api.Diagnostic{
		Severity: api.Error,
		Summary:  "Stage cancelled",
		Detail:   fmt.Sprintf("%s was ended because gpuflow cancelled the stage (%v).", cmdline, cause),
	}
}
