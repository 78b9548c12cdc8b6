package engine

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/calibration"
	"github.com/gpuflow/gpuflow/engine/dag"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/engine/ncclenv"
	"github.com/gpuflow/gpuflow/engine/state"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// PlanOptions say what to plan against and what the user asked for.
type PlanOptions struct {
	Plugins Plugins
	// State is the recorded state; nil plans as if nothing ever ran.
	State *state.State
	// Replace forces these stage addresses to run again.
	Replace []string
	// Targets limits the plan to these stages and what they need.
	Targets []string
	// Version is gpuflow's version, recorded in the plan.
	Version string
	// Calibration holds measured figures per hardware profile; nil means
	// estimates come from datasheets alone.
	Calibration *calibration.File
	// Clusters answers what the plan asks Kubernetes clusters; nil plans
	// without asking (an Indexed Job, never a JobSet).
	Clusters ClusterProbe
}

// planner carries one planning pass.
type planner struct {
	w     *Workload
	opts  PlanOptions
	nodes map[string]*stageNode
	graph *dag.Graph
	// stageValues is what stage.TYPE.NAME evaluates to for stages planned so far.
	stageValues map[string]cty.Value
	plans       map[string]*StagePlan
	// shared caches blockNamespaces.
	shared map[string]cty.Value
}

// BuildPlan plans the workload. Diagnostics carry every problem found; the
// plan is nil when any is an error.
func BuildPlan(ctx context.Context, w *Workload, opts PlanOptions) (*Plan, hcl.Diagnostics) {
	nodes, g, diags := w.analyseStages(ctx, opts.Plugins)
	if diags.HasErrors() {
		return nil, diags
	}
	p := &planner{w: w, opts: opts, nodes: nodes, graph: g, stageValues: map[string]cty.Value{}, plans: map[string]*StagePlan{}}
	order, _ := g.TopoOrder()
	include, tdiags := p.selected()
	diags = append(diags, tdiags...)
	for _, addr := range order {
		if !include[addr] {
			continue
		}
		sp, sdiags := p.planStage(ctx, nodes[addr])
		diags = append(diags, sdiags...)
		if sp != nil {
			p.plans[addr] = sp
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	outputs, odiags := p.outputs()
	if len(opts.Targets) == 0 {
		// A targeted plan leaves stages out, and outputs that read them
		// cannot be evaluated; that is not the outputs' fault.
		diags = append(diags, odiags...)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return p.assemble(order, include, outputs), diags
}

// selected is the set of stages the plan covers: all, or the targets and
// everything they depend on.
func (p *planner) selected() (map[string]bool, hcl.Diagnostics) {
	include := map[string]bool{}
	if len(p.opts.Targets) == 0 {
		for _, n := range p.graph.Nodes() {
			include[n] = true
		}
		return include, nil
	}
	var diags hcl.Diagnostics
	for _, t := range p.opts.Targets {
		addr := normalizeAddr(t)
		if !p.graph.Has(addr) {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown -target",
				Detail: fmt.Sprintf("-target %s names no stage in the workload.%s Stages are named TYPE.NAME, as gpuflow state list shows.", t, didYouMean(addr, p.graph.Nodes()))})
			continue
		}
		for a := range p.graph.Ancestors(addr) {
			include[a] = true
		}
	}
	return include, diags
}

// normalizeAddr accepts TYPE.NAME and stage.TYPE.NAME.
func normalizeAddr(a string) string {
	const prefix = "stage."
	if len(a) > len(prefix) && a[:len(prefix)] == prefix {
		return a[len(prefix):]
	}
	return a
}

func (p *planner) planStage(ctx context.Context, n *stageNode) (*StagePlan, hcl.Diagnostics) {
	s := n.cfg
	sp := &StagePlan{Address: s.Addr(), Type: s.Type, Name: s.Name,
		Plugin:    PluginRef{Name: n.plugin.Name, Version: n.plugin.Version},
		DependsOn: p.graph.DependsOn(s.Addr())}
	diags := p.resolveUses(n, sp)
	if diags.HasErrors() {
		return nil, diags
	}
	eval := p.evalContext(n)
	config, cdiags := hcldec.Decode(s.Body, n.spec, eval)
	cdiags = append(cdiags, numbersInRange(config, s.Body, n.spec)...)
	diags = append(diags, cdiags...)
	if cdiags.HasErrors() {
		return nil, diags
	}
	config, cdiags = withUses(n, config, eval)
	if diags = append(diags, cdiags...); cdiags.HasErrors() {
		return nil, diags
	}
	if wdiags := p.checkWeights(n, sp, config); wdiags.HasErrors() {
		return nil, append(diags, wdiags...)
	}
	// The layout is settled (searched, for an auto layout) before the
	// plugin sees the body, so it validates and plans the real degrees.
	if p.wantsAuto(n) {
		diags = append(diags, p.searchLayout(n, sp, config)...)
		config = bindLayout(config, sp)
	} else {
		diags = append(diags, p.estimateStage(n, sp, config)...)
	}
	if hw := p.w.Hardware[n.hardware]; hw != nil {
		sp.NCCLEnv = ncclenv.Merge(ncclenv.Derive(hw), s.NCCLEnv)
	}
	diags = append(diags, p.consultPlugin(ctx, n, sp, config)...)
	if diags.HasErrors() {
		return nil, diags
	}
	diags = append(diags, p.planExecutor(n, sp)...)
	files, fdiags := inputFiles(n, config, p.w.Config.Dir)
	if diags = append(diags, fdiags...); fdiags.HasErrors() {
		return nil, diags
	}
	sp.Config, sp.ConfigUnknown = configJSON(config)
	p.decideAction(n, sp, config, files)
	p.stageValues[s.Addr()] = p.stageValue(sp)
	return sp, diags
}

// consultPlugin has the stage's plugin validate and plan the decoded body,
// and records its details, claims and expected duration.
func (p *planner) consultPlugin(ctx context.Context, n *stageNode, sp *StagePlan, config cty.Value) hcl.Diagnostics {
	req := &api.StageRequest{Type: sp.Type, Name: sp.Name, Config: config, WorkDir: p.w.Config.Dir, Env: envMap(sp.NCCLEnv)}
	vdiags, err := n.plugin.Provider.ValidateStage(ctx, req)
	diags := p.pluginDiags(n, vdiags, err, "validate")
	if diags.HasErrors() {
		return diags
	}
	resp, err := n.plugin.Provider.PlanStage(ctx, req)
	if err != nil || resp == nil {
		return append(diags, p.pluginDiags(n, nil, err, "plan")...)
	}
	diags = append(diags, p.pluginDiags(n, resp.Diagnostics, nil, "plan")...)
	sp.Details, sp.Claims, sp.ExpectedDurationS = resp.Details, resp.Claims, resp.ExpectedDuration.Seconds()
	if sp.Hardware != nil && sp.Claims.Nodes == 0 {
		sp.Claims = api.Claims{Nodes: sp.Hardware.Nodes, GPUsPerNode: sp.Hardware.GPUsPerNode}
	}
	return diags
}

// pluginDiags converts a plugin's diagnostics (or its transport error) to
// HCL diagnostics pointing into the stage body.
func (p *planner) pluginDiags(n *stageNode, d api.Diagnostics, err error, call string) hcl.Diagnostics {
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Plugin failed",
			Detail:  fmt.Sprintf("Plugin %s failed to %s stage %s: %s.", n.plugin.Name, call, n.cfg.Addr(), err),
			Subject: n.cfg.DeclRange.Ptr()}}
	}
	return useDiags(n, d)
}

// resolveUses fills the stage's hardware, model, layout and placement, and
// checks the layout rules for this model on this hardware.
func (p *planner) resolveUses(n *stageNode, sp *StagePlan) hcl.Diagnostics {
	hw := p.w.Hardware[n.hardware]
	if hw != nil {
		sp.Hardware = &StageHW{Name: n.hardware, Nodes: hw.Nodes, GPUsPerNode: hw.GPU.PerNode, GPUModel: hw.GPU.Model,
			GPUMemoryBytes: hw.GPU.MemoryBytes, Interconnect: hw.Interconnect.Kind, Network: hw.Network.Kind,
			CostPerGPUHour: hw.CostPerGPUHour}
	}
	if n.model != "" {
		sp.Model = &StageModel{Name: n.model, Shape: p.w.Models[n.model]}
	}
	rl := p.w.Layouts[n.layout]
	if rl == nil || rl.Auto != nil || n.layoutAuto {
		return nil
	}
	sp.Layout = &StageLayout{Name: n.layout, Layout: rl.Layout}
	if hw == nil || sp.Model == nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Layout without hardware and model",
			Detail:  "A stage with a layout must also set hardware and model, so the layout can be checked and placed.",
			Subject: rangeOr(n.useRange, "layout", n.cfg.DeclRange)}}
	}
	if layout.Errors(layout.CheckOwn(rl.Layout)) {
		return nil // reported once, where the layout is declared (LoadWorkload)
	}
	fs := layout.CheckFit(rl.Layout, sp.Model.Shape, hw, 0)
	diags := findingDiagnostics(fs, rl.Block, n.useRange["layout"])
	if layout.Errors(fs) {
		return diags
	}
	pl, err := layout.Place(rl.Layout, hw)
	if err != nil {
		return append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot place layout",
			Detail: err.Error() + ".", Subject: rangeOr(n.useRange, "layout", n.cfg.DeclRange)})
	}
	sp.Placement = pl
	return diags
}

// evalContext is the context a stage body is decoded in: var, local and
// the block namespaces, with stage.TYPE.NAME for the stages planned so far.
func (p *planner) evalContext(n *stageNode) *hcl.EvalContext {
	vars := map[string]cty.Value{"stage": p.stageNamespace(n)}
	for name, v := range p.blockNamespaces() {
		vars[name] = v
	}
	return &hcl.EvalContext{Variables: vars, Functions: dsl.Functions()}
}

// blockNamespaces are var, local, hardware, model, layout and dataset:
// the same for every stage, so they are built once per planner. (Callers
// that share a planner across goroutines already serialise evalContext.)
func (p *planner) blockNamespaces() map[string]cty.Value {
	if p.shared != nil {
		return p.shared
	}
	ns := p.w.Config.EvalContext().Variables
	hw := map[string]cty.Value{}
	for name, prof := range p.w.Hardware {
		hw[name] = prof.Value()
	}
	models := map[string]cty.Value{}
	for name, s := range p.w.Models {
		models[name] = modelValue(name, s)
	}
	layouts := map[string]cty.Value{}
	for name, l := range p.w.Layouts {
		layouts[name] = layoutValue(name, l.Layout)
	}
	datasets := map[string]cty.Value{}
	for name, d := range p.w.Config.Datasets {
		datasets[name] = d.Value
	}
	ns["hardware"] = cty.ObjectVal(hw)
	ns["model"] = cty.ObjectVal(models)
	ns["layout"] = cty.ObjectVal(layouts)
	ns["dataset"] = cty.ObjectVal(datasets)
	p.shared = ns
	return ns
}

// stageNamespace builds stage.TYPE.NAME objects for the stages n depends on.
func (p *planner) stageNamespace(n *stageNode) cty.Value {
	byType := map[string]map[string]cty.Value{}
	for up := range n.upstream {
		un := p.nodes[up]
		if un == nil {
			continue
		}
		if byType[un.cfg.Type] == nil {
			byType[un.cfg.Type] = map[string]cty.Value{}
		}
		v, ok := p.stageValues[up]
		if !ok {
			v = cty.DynamicVal
		}
		byType[un.cfg.Type][un.cfg.Name] = v
	}
	types := map[string]cty.Value{}
	for t, m := range byType {
		types[t] = cty.ObjectVal(m)
	}
	return cty.ObjectVal(types)
}

// stageValue is what stage.TYPE.NAME evaluates to downstream: the recorded
// outputs when the stage will not run again, unknown otherwise.
func (p *planner) stageValue(sp *StagePlan) cty.Value {
	outputs := cty.DynamicVal
	if sp.Action == ActionNoOp && p.opts.State != nil {
		if st := p.opts.State.Stages[sp.Address]; st != nil {
			if v, err := OutputsValue(st.Outputs); err == nil {
				outputs = v
			}
		}
	}
	return cty.ObjectVal(map[string]cty.Value{
		"outputs": outputs,
		"address": cty.StringVal(sp.Address),
	})
}

// envMap turns NCCL settings into the environment a plugin receives.
func envMap(settings []ncclenv.Setting) map[string]string {
	if len(settings) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, s := range settings {
		out[s.Name] = s.Value
	}
	return out
}
