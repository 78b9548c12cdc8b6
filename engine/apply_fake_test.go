package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// stepWorld is an in-process plugin serving stage type "step" whose body
// says how the stage behaves, and a Launcher for it that records every
// process and when each stage ran.
//
//	value   string   output "value" (default "v-NAME")
//	input   string   echoed as output "echo"
//	tag     string   ignored; changes the input hash only
//	fail    bool     report an error diagnostic on "fail"
//	crash   bool     the process dies mid-stage
//	sleep   string   a duration to work for; Stop or cancel ends it early
//	hang    bool     ignore Stop and cancel until the process is killed
//	gpus    number   GPUs per node the stage claims
//	hardware         a hardware block, whose GPUs the stage then claims
type stepWorld struct {
	mu        sync.Mutex
	launches  int
	running   int
	peak      int
	intervals map[string][2]time.Time
	procs     []*stepProcess
	started   chan string // each stage's name as it starts, if not nil
}

func newStepWorld() *stepWorld {
	return &stepWorld{intervals: map[string][2]time.Time{}}
}

var stepSchema = &api.BlockSchema{Attributes: map[string]*api.Attribute{
	"value": {Type: cty.String}, "input": {Type: cty.String}, "tag": {Type: cty.String},
	"fail": {Type: cty.Bool}, "crash": {Type: cty.Bool}, "sleep": {Type: cty.String},
	"hang": {Type: cty.Bool}, "gpus": {Type: cty.Number},
}}

// stepContract: a step may name the hardware whose GPUs it claims.
var stepContract = &api.StageContract{MetaArguments: []api.MetaArgument{{Name: api.MetaHardware}}}

// planning is the provider plan consults; it never applies.
func (w *stepWorld) planning() api.Provider { return &stepProvider{world: w} }

func (w *stepWorld) Launch(_ context.Context, p *engine.Plugin) (engine.PluginProcess, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.launches++
	proc := &stepProcess{killed: make(chan struct{})}
	proc.provider = &stepProvider{world: w, proc: proc}
	w.procs = append(w.procs, proc)
	return proc, nil
}

func (w *stepWorld) begin(name string) {
	w.mu.Lock()
	w.running++
	w.peak = max(w.peak, w.running)
	w.intervals[name] = [2]time.Time{time.Now()}
	started := w.started
	w.mu.Unlock()
	if started != nil {
		started <- name
	}
}

func (w *stepWorld) end(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running--
	iv := w.intervals[name]
	iv[1] = time.Now()
	w.intervals[name] = iv
}

func (w *stepWorld) launchCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.launches
}

// overlap reports whether stages a and b ran at the same time.
func (w *stepWorld) overlap(a, b string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	x, y := w.intervals[a], w.intervals[b]
	return x[0].Before(y[1]) && y[0].Before(x[1])
}

// stepProcess stands for a plugin process.
type stepProcess struct {
	provider   *stepProvider
	killed     chan struct{}
	killOnce   sync.Once
	exited     atomic.Bool
	killedHost atomic.Bool
	stopped    atomic.Bool
	applying   atomic.Bool
}

func (p *stepProcess) Provider() api.Provider { return p.provider }
func (p *stepProcess) Exited() bool           { return p.exited.Load() }
func (p *stepProcess) StderrTail() []string {
	if p.provider.crashed.Load() {
		return []string{"panic: step crashed on purpose", "goroutine 1 [running]:"}
	}
	return nil
}

func (p *stepProcess) Kill() {
	p.killOnce.Do(func() {
		if p.applying.Load() {
			p.killedHost.Store(true)
		}
		p.exited.Store(true)
		close(p.killed)
	})
}

type stepProvider struct {
	world   *stepWorld
	proc    *stepProcess
	stopMu  sync.Mutex
	stop    chan struct{}
	crashed atomic.Bool
}

func (p *stepProvider) Schema(context.Context) (*api.Schema, error) {
	return &api.Schema{Name: "step", Version: "1.0", Capabilities: []string{api.CapabilityStop},
		StageTypes: map[string]*api.BlockSchema{"step": stepSchema}, Contracts: map[string]*api.StageContract{"step": stepContract}}, nil
}

func (p *stepProvider) ValidateStage(context.Context, *api.StageRequest) (api.Diagnostics, error) {
	return nil, nil
}

func (p *stepProvider) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	resp := &api.PlanResponse{Details: []api.Detail{{Key: "does", Value: "a step"}}}
	if g := req.Config.GetAttr("gpus"); g.IsKnown() && !g.IsNull() {
		n, _ := g.AsBigFloat().Int64()
		resp.Claims = api.Claims{Nodes: 1, GPUsPerNode: int(n)}
	}
	return resp, nil
}

func (p *stepProvider) stopChan() chan struct{} {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.stop == nil {
		p.stop = make(chan struct{})
	}
	return p.stop
}

func (p *stepProvider) Stop(context.Context) error {
	p.proc.stopped.Store(true)
	ch := p.stopChan()
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
	return nil
}

func flag(cfg cty.Value, name string) bool {
	v := cfg.GetAttr(name)
	return v.IsKnown() && !v.IsNull() && v.True()
}

func str(cfg cty.Value, name string) string {
	v := cfg.GetAttr(name)
	if !v.IsKnown() || v.IsNull() {
		return ""
	}
	return v.AsString()
}

func (p *stepProvider) ApplyStage(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	cfg := req.Config
	p.proc.applying.Store(true)
	defer p.proc.applying.Store(false)
	p.world.begin(req.Name)
	defer p.world.end(req.Name)
	sink.Send(api.Event{Log: &api.Log{Level: "info", Message: "hello from " + req.Name}})
	for i := 1; i <= 3; i++ {
		sink.Send(api.Event{Progress: &api.Progress{Label: "steps", Done: float64(i), Total: 3, Unit: "step"}})
		sink.Send(api.Event{Metric: &api.Metric{Name: "loss", Value: float64(4 - i), Step: int64(i)}})
	}
	switch {
	case flag(cfg, "crash"):
		p.crashed.Store(true)
		p.proc.exited.Store(true)
		return nil, errors.New("rpc error: code = Unavailable desc = connection lost")
	case flag(cfg, "hang"):
		<-p.proc.killed
		return nil, errors.New("rpc error: code = Unavailable desc = connection lost")
	}
	if d := str(cfg, "sleep"); d != "" {
		dur, err := time.ParseDuration(d)
		if err != nil {
			return nil, err
		}
		select {
		case <-time.After(dur):
		case <-p.stopChan():
			return &api.ApplyResponse{Diagnostics: api.Diagnostics{{Severity: api.Error, Summary: "Stopped"}}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if flag(cfg, "fail") {
		return &api.ApplyResponse{Diagnostics: api.Diagnostics{{Severity: api.Error, Summary: "Step failed",
			Detail: "It was asked to.", Path: cty.GetAttrPath("fail")}}}, nil
	}
	value := str(cfg, "value")
	if value == "" {
		value = "v-" + req.Name
	}
	return &api.ApplyResponse{Outputs: map[string]cty.Value{
		"value": cty.StringVal(value),
		"echo":  cty.StringVal(str(cfg, "input")),
		"list":  cty.ListVal([]cty.Value{cty.StringVal("x"), cty.StringVal(fmt.Sprint(len(value)))}),
	}}, nil
}

// killedByHost lists the stages whose process the engine had to kill.
func (w *stepWorld) killedByHost() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(slices.DeleteFunc(slices.Clone(w.procs), func(p *stepProcess) bool { return !p.killedHost.Load() }))
}
