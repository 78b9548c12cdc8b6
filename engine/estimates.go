package engine

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/state"
	"github.com/gpuflow/gpuflow/hardware"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// estimateStage predicts memory, time and cost for a stage whose contract
// asks for an estimate and which has a placed layout, and turns the
// estimator's findings into diagnostics.
func (p *planner) estimateStage(n *stageNode, sp *StagePlan, config cty.Value) hcl.Diagnostics {
	if sp.Layout == nil || sp.Model == nil || sp.Placement == nil || n.plugin.Contract == nil || n.plugin.Contract.Estimate == nil {
		return nil
	}
	use := rangeOr(n.useRange, "layout", n.cfg.DeclRange)
	if diags := checkWork(n, use); diags.HasErrors() {
		return diags
	}
	hw := p.w.Hardware[n.hardware]
	inputs := readEstimateInputs(n.plugin.Contract, config)
	in := estimate.Input{Model: sp.Model.Shape, Layout: sp.Layout.Layout, Hardware: hw, Placement: sp.Placement,
		Framework: inputs.framework, LoRA: inputs.lora, TrainTokens: inputs.trainTokens, TrainSteps: inputs.trainSteps,
		CheckpointEvery: inputs.checkpointEvery, Calibration: p.opts.Calibration.For(calibrationKey(hw)),
		Forward: n.plugin.Contract.Estimate.Work == api.WorkForward}
	est, err := estimate.Compute(in)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot estimate stage",
			Detail: fmt.Sprintf("The estimator rejected stage %s: %s.", sp.Address, err), Subject: use}}
	}
	sp.Estimate = est
	return findingDiagnostics(est.Findings, nil, *use)
}

// checkWork refuses a kind of work the estimator does not model.
func checkWork(n *stageNode, use *hcl.Range) hcl.Diagnostics {
	if work := n.plugin.Contract.Estimate.Work; work != api.WorkTrain && work != api.WorkForward {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot estimate stage",
			Detail: fmt.Sprintf("Plugin %s asks for an estimate of work %q for stage type %q, but the estimator models only %q and %q; use a gpuflow that models it, or a plugin that asks for none.",
				n.plugin.Name, work, n.cfg.Type, api.WorkTrain, api.WorkForward), Subject: use}}
	}
	return nil
}

// estimateInputs is what a stage contributes to its estimate, read from
// its decoded body where its contract says.
type estimateInputs struct {
	framework   string
	lora        *estimate.LoRA
	trainTokens float64
	trainSteps  int64
	globalBatch int
	// checkpointEvery is the steps between checkpoints (0: none).
	checkpointEvery int64
}

// readEstimateInputs reads the attributes the contract names; the budget
// is the token budget where one is set, else the step budget.
func readEstimateInputs(c *api.StageContract, config cty.Value) estimateInputs {
	if c == nil || c.Estimate == nil {
		return estimateInputs{}
	}
	e := c.Estimate
	in := estimateInputs{framework: stringArg(config, e.Framework), lora: loraArg(config, e.LoRA),
		globalBatch: int(numberArg(config, e.GlobalBatch)), checkpointEvery: int64(numberArg(config, e.CheckpointEvery))}
	if v := numberArg(config, e.TrainTokens); v > 0 {
		in.trainTokens = v
	} else if v := numberArg(config, e.Steps); v > 0 {
		in.trainSteps = int64(v)
	}
	return in
}

// calibrationKey is the name measurements are filed under: the built-in
// profile a hardware block starts from, or the block's own name.
func calibrationKey(hw *hardware.Profile) string {
	if hw.BaseProfile != "" {
		return hw.BaseProfile
	}
	return hw.Name
}

func attr(config cty.Value, name string) cty.Value {
	if name == "" || config.IsNull() || !config.IsKnown() || !config.Type().IsObjectType() || !config.Type().HasAttribute(name) {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	v := config.GetAttr(name)
	if !v.IsKnown() {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	return v
}

func stringArg(config cty.Value, name string) string {
	if v := attr(config, name); !v.IsNull() && v.Type() == cty.String {
		return v.AsString()
	}
	return ""
}

func numberArg(config cty.Value, name string) float64 {
	if v := attr(config, name); !v.IsNull() && v.Type() == cty.Number {
		f, _ := v.AsBigFloat().Float64()
		return f
	}
	return 0
}

func loraArg(config cty.Value, name string) *estimate.LoRA {
	l := attr(config, name)
	if l.IsNull() || !l.Type().IsObjectType() {
		return nil
	}
	out := &estimate.LoRA{Rank: int(numberArg(l, "rank"))}
	if t := attr(l, "targets"); !t.IsNull() && (t.Type().IsListType() || t.Type().IsTupleType()) {
		for _, e := range t.AsValueSlice() {
			if e.IsKnown() && !e.IsNull() && e.Type() == cty.String {
				out.Targets = append(out.Targets, e.AsString())
			}
		}
	}
	return out
}

// prediction keeps what a run can be checked against; nil for a stage the
// plan did not estimate.
func prediction(e *estimate.Estimate) *state.Prediction {
	if e == nil {
		return nil
	}
	return &state.Prediction{MemoryBytes: e.Memory.Total, StepTimeS: e.StepTimeS, TokensPerS: e.TokensPerS, MFU: e.MFU}
}
