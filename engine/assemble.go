package engine

import (
	"encoding/json"

	"github.com/hashicorp/hcl/v2"
)

// assemble puts the planned stages, edges and outputs into a Plan.
func (p *planner) assemble(order []string, include map[string]bool, outputs []PlanOutput) *Plan {
	pl := &Plan{FormatVersion: PlanFormatVersion, GpuflowVersion: p.opts.Version, Workload: p.w.Path,
		ConfigHash: p.w.ConfigHash(), Variables: p.w.VariableValues(),
		Targets: p.opts.Targets, Replace: p.opts.Replace, Stages: []*StagePlan{}, Edges: [][2]string{}}
	if st := p.opts.State; st != nil {
		pl.State = PlanState{Lineage: st.Lineage, Serial: st.Serial}
	}
	for _, addr := range order {
		sp := p.plans[addr]
		if sp == nil {
			continue
		}
		pl.Stages = append(pl.Stages, sp)
		switch sp.Action {
		case ActionCreate:
			pl.Summary.Create++
		case ActionReplace:
			pl.Summary.Replace++
		default:
			pl.Summary.NoOp++
		}
	}
	for _, e := range p.graph.Edges() {
		if include[e.From] && include[e.To] {
			pl.Edges = append(pl.Edges, [2]string{e.From, e.To})
		}
	}
	pl.Outputs = outputs
	return pl
}

// outputs evaluates the workload's outputs as far as the plan knows them.
// Values that depend on stages yet to run are unknown, not errors; an
// expression that cannot be evaluated at all is.
func (p *planner) outputs() ([]PlanOutput, hcl.Diagnostics) {
	all := &stageNode{upstream: map[string]bool{}}
	for addr := range p.plans {
		all.upstream[addr] = true
	}
	ctx := p.evalContext(all)
	var out []PlanOutput
	var problems hcl.Diagnostics
	for _, o := range p.w.Config.Outputs {
		po := PlanOutput{Name: o.Name, Sensitive: o.Sensitive}
		v, diags := o.Expr.Value(ctx)
		problems = append(problems, diags...)
		if !diags.HasErrors() && v.IsWhollyKnown() {
			po.Known = true
			if !o.Sensitive {
				raw, _ := configJSON(v)
				po.Value = json.RawMessage(raw)
			}
		}
		out = append(out, po)
	}
	return out, problems
}
