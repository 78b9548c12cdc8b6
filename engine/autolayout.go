package engine

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/autolayout"
	"github.com/gpuflow/gpuflow/engine/layout"
)

// AutoLayoutPlan is the search behind an auto layout: what it chose, the
// runners-up and why each lost.
type AutoLayoutPlan struct {
	Objective  string                 `json:"objective"`
	Considered int                    `json:"considered"`
	Fitting    int                    `json:"fitting"`
	RunnersUp  []autolayout.Candidate `json:"runners_up"`
}

// wantsAuto reports whether the stage's layout is searched rather than
// declared.
func (p *planner) wantsAuto(n *stageNode) bool {
	if n.layoutAuto {
		return true
	}
	rl := p.w.Layouts[n.layout]
	return rl != nil && rl.Auto != nil
}

// searchLayout runs the layout search for an auto stage and fills the
// stage's layout, placement and estimate with the choice.
func (p *planner) searchLayout(n *stageNode, sp *StagePlan, config cty.Value) hcl.Diagnostics {
	use := rangeOr(n.useRange, "layout", n.cfg.DeclRange)
	hw := p.w.Hardware[n.hardware]
	if hw == nil || sp.Model == nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Layout without hardware and model",
			Detail: "An auto layout is searched for a model on hardware; set hardware and model on the stage.", Subject: use}}
	}
	req, diags := p.searchRequest(n, config, use)
	if diags.HasErrors() {
		return diags
	}
	req.Model, req.Hardware = sp.Model.Shape, hw
	res, err := autolayout.Search(req)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No layout fits",
			Detail: fmt.Sprintf("The layout search for stage %s found nothing: %s.", sp.Address, err), Subject: use}}
	}
	name := n.layout
	if n.layoutAuto {
		name = "auto"
	}
	sp.Layout = &StageLayout{Name: name, Layout: res.Choice.Layout}
	sp.Estimate = res.Choice.Estimate
	sp.AutoLayout = &AutoLayoutPlan{Objective: res.Objective, Considered: res.Considered, Fitting: res.Fitting, RunnersUp: res.RunnersUp}
	pl, err := layout.Place(res.Choice.Layout, hw)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot place layout", Detail: err.Error() + ".", Subject: use}}
	}
	sp.Placement = pl
	return findingDiagnostics(sp.Estimate.Findings, nil, *use)
}

// searchRequest gathers the search's fixed choices from the auto layout
// block, or from the stage for layout = "auto".
func (p *planner) searchRequest(n *stageNode, config cty.Value, use *hcl.Range) (autolayout.Request, hcl.Diagnostics) {
	in, d := readEstimateInputs(n.plugin.Contract, config)
	if diags := useDiags(n, d); diags.HasErrors() {
		return autolayout.Request{}, diags
	}
	req := autolayout.Request{Objective: autolayout.ObjectiveThroughput, Framework: in.framework, LoRA: in.lora,
		TrainTokens: in.trainTokens, TrainSteps: in.trainSteps,
		Calibration: p.opts.Calibration.For(calibrationKey(p.w.Hardware[n.hardware]))}
	if n.layoutAuto {
		req.GlobalBatch = in.globalBatch
		if req.GlobalBatch <= 0 {
			return req, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Auto layout without a global batch",
				Detail:  fmt.Sprintf("layout = \"auto\" keeps the global batch fixed while it searches; %s, or use a layout block with global_batch and an auto block.", globalBatchAdvice(n)),
				Subject: use}}
		}
		return req, nil
	}
	rl := p.w.Layouts[n.layout]
	spec := rl.Block.Spec
	if spec.GlobalBatch == nil {
		return req, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Auto layout without a global batch",
			Detail:  fmt.Sprintf("Layout %q searches its degrees but keeps the global batch fixed; add global_batch = N to it.", rl.Block.Name),
			Subject: rl.Block.DeclRange.Ptr()}}
	}
	req.GlobalBatch = *spec.GlobalBatch
	if spec.Precision != nil {
		req.Precision = *spec.Precision
	}
	if a := rl.Auto; a != nil {
		if a.Objective != nil {
			req.Objective = *a.Objective
		}
		copyInt(&req.Limits.MaxTP, a.MaxTP)
		copyInt(&req.Limits.MaxPP, a.MaxPP)
	}
	return req, nil
}

// bindLayout puts the layout the search chose into the decoded body, so the
// plugin, the input hash and state see the degrees that will run, not the
// search request (a string "auto" or a layout block with open degrees).
func bindLayout(config cty.Value, sp *StagePlan) cty.Value {
	if sp.AutoLayout == nil || sp.Layout == nil || !config.Type().IsObjectType() || !config.Type().HasAttribute("layout") {
		return config
	}
	attrs := config.AsValueMap()
	attrs["layout"] = layoutValue(sp.Layout.Name, sp.Layout.Layout)
	return cty.ObjectVal(attrs)
}

// globalBatchAdvice says where a stage sets the global batch a search of
// layout = "auto" keeps, as its contract names it.
func globalBatchAdvice(n *stageNode) string {
	if c := n.plugin.Contract; c != nil && c.Estimate != nil && c.Estimate.GlobalBatch != "" {
		return fmt.Sprintf("set %s on the stage", c.Estimate.GlobalBatch)
	}
	return fmt.Sprintf("stage type %q takes no global batch", n.cfg.Type)
}
