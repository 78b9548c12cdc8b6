package fake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// Name and Version identify the plugin.
const (
	Name    = "fake"
	Version = "1.0.0"
)

// Behaviours a fake stage can have.
const (
	Succeed = "succeed" // outputs its outputs
	Fail    = "fail"    // returns an error diagnostic
	Crash   = "crash"   // the process logs an error and exits with status 2
	Hang    = "hang"    // blocks until stopped or cancelled
	Panic   = "panic"   // the process dies of a nil-pointer dereference
	Exit    = "exit"    // the process exits with status 0, silently
)

var behaviours = []string{Succeed, Fail, Crash, Hang, Panic, Exit}

// ErrProcessDeath is returned in-process by the behaviours that end a
// plugin process (crash, panic, exit), standing for the error a host
// reports when the process dies.
var ErrProcessDeath = errors.New("the fake plugin process died")

var stageSchema = &api.BlockSchema{
	Description: "A stage that behaves as told, for tests.",
	Attributes: map[string]*api.Attribute{
		"behavior":       {Type: cty.String, Description: strings.Join(behaviours, ", ") + "; default succeed."},
		"duration":       {Type: cty.String, Description: "How long to run before behaving, as a duration."},
		"outputs":        {Type: cty.Map(cty.String), Description: "Outputs of a succeeding stage."},
		"gpus":           {Type: cty.Number, Description: "GPUs per node to claim on one node."},
		"progress_steps": {Type: cty.Number, Description: "Progress events spread over the duration."},
	},
}

// Provider is the fake plugin.
type Provider struct {
	stopper sdk.Stopper
	// die ends the process for crash, panic and exit; nil in-process.
	die func(behaviour string)
}

var _ api.Provider = (*Provider)(nil)

// New returns an in-process fake provider: crash, panic and exit return
// an error wrapping ErrProcessDeath instead of killing the test.
func New() *Provider { return &Provider{} }

// NewProcess returns the provider a plugin process serves: crash, panic
// and exit really end the process.
func NewProcess() *Provider { return &Provider{die: dieForReal} }

func dieForReal(behaviour string) {
	switch behaviour {
	case Crash:
		sdk.Logger().Error("fake plugin crashing as asked")
		os.Exit(2)
	case Panic:
		var p *Provider
		p.die = nil // a real nil-pointer dereference, not a panic() call
	case Exit:
		os.Exit(0)
	}
}

// Schema implements api.Provider.
func (p *Provider) Schema(context.Context) (*api.Schema, error) {
	return &api.Schema{
		Name:         Name,
		Version:      Version,
		Capabilities: []string{api.CapabilityStop, api.CapabilityConcurrentApply},
		StageTypes:   map[string]*api.BlockSchema{"fake": stageSchema},
	}, nil
}

// ValidateStage implements api.Provider.
func (p *Provider) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	_, diags := decodeConfig(req.Config)
	return diags, nil
}

// PlanStage implements api.Provider: it claims the GPUs and expects the
// duration.
func (p *Provider) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	cfg, diags := decodeConfig(req.Config)
	plan := &api.PlanResponse{
		Details:          []api.Detail{{Key: "behavior", Value: cfg.behaviour}},
		ExpectedDuration: cfg.duration,
		Diagnostics:      diags,
	}
	if cfg.gpus > 0 {
		plan.Claims = api.Claims{Nodes: 1, GPUsPerNode: cfg.gpus}
	}
	return plan, nil
}

// ApplyStage implements api.Provider.
func (p *Provider) ApplyStage(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	cfg, diags := decodeConfig(req.Config)
	if diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}, nil
	}
	ctx, release := p.stopper.Track(ctx)
	defer release()
	sink.Send(api.Event{Time: time.Now(), Log: &api.Log{Level: "info", Message: fmt.Sprintf("fake stage %s: %s", req.Name, cfg.behaviour)}})
	if !progress(ctx, cfg, sink) {
		return ended(ctx), nil
	}
	switch cfg.behaviour {
	case Fail:
		return &api.ApplyResponse{Diagnostics: api.Diagnostics{{
			Severity: api.Error,
			Summary:  "Fake failure",
			Detail:   fmt.Sprintf("Stage %s failed because its behavior is %q.", req.Name, Fail),
			Path:     cty.GetAttrPath("behavior"),
		}}}, nil
	case Hang:
		<-ctx.Done()
		return ended(ctx), nil
	case Crash, Panic, Exit:
		if p.die != nil {
			p.die(cfg.behaviour)
		}
		return nil, fmt.Errorf("stage %s (behavior %q): %w", req.Name, cfg.behaviour, ErrProcessDeath)
	}
	outputs := map[string]cty.Value{}
	for _, k := range slices.Sorted(maps.Keys(cfg.outputs)) {
		outputs[k] = cty.StringVal(cfg.outputs[k])
	}
	return &api.ApplyResponse{Outputs: outputs}, nil
}

// progress spreads the steps over the duration; false if ctx ended first.
func progress(ctx context.Context, cfg config, sink api.EventSink) bool {
	steps := max(cfg.steps, 1)
	for i := 1; i <= steps; i++ {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(cfg.duration / time.Duration(steps)):
		}
		if cfg.steps > 0 {
			sink.Send(api.Event{Time: time.Now(), Progress: &api.Progress{Done: float64(i), Total: float64(steps), Unit: "steps"}})
			sink.Send(api.Event{Time: time.Now(), Metric: &api.Metric{Name: "step", Value: float64(i), Step: int64(i)}})
		}
	}
	return true
}

// ended reports a stage ended by Stop or by its context.
func ended(ctx context.Context) *api.ApplyResponse {
	summary := "Stage cancelled"
	if errors.Is(context.Cause(ctx), sdk.ErrStopped) {
		summary = "Stage stopped"
	}
	return &api.ApplyResponse{Diagnostics: api.Diagnostics{{
		Severity: api.Error,
		Summary:  summary,
		Detail:   fmt.Sprintf("The fake stage ended before it finished: %v.", context.Cause(ctx)),
	}}}
}

// Stop implements api.Provider.
func (p *Provider) Stop(context.Context) error {
	p.stopper.Stop()
	return nil
}
