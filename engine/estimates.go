package engine

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/hardware"
)

// Training stage arguments the estimator reads. They are a convention every
// training plugin follows (plugins/train declares them), not engine-owned
// meta-arguments: the plugin still owns and validates them.
const (
	argFramework   = "framework"
	argTrainTokens = "train_tokens"
	argSteps       = "steps"
	argLoRA        = "lora"
	argCheckpoint  = "checkpoint_every"
)

// estimateStage predicts memory, time and cost for a stage with a placed
// layout, and turns the estimator's findings into diagnostics.
func (p *planner) estimateStage(n *stageNode, sp *StagePlan, config cty.Value) hcl.Diagnostics {
	if sp.Layout == nil || sp.Model == nil || sp.Placement == nil {
		return nil
	}
	hw := p.w.Hardware[n.hardware]
	in := estimate.Input{Model: sp.Model.Shape, Layout: sp.Layout.Layout, Hardware: hw, Placement: sp.Placement,
		Framework: stringArg(config, argFramework), LoRA: loraArg(config),
		Calibration: p.opts.Calibration.For(calibrationKey(hw))}
	if v := numberArg(config, argTrainTokens); v > 0 {
		in.TrainTokens = v
	} else if v := numberArg(config, argSteps); v > 0 {
		in.TrainSteps = int64(v)
	}
	if v := numberArg(config, argCheckpoint); v > 0 {
		in.CheckpointEvery = int64(v)
	}
	est, err := estimate.Compute(in)
	use := rangeOr(n.useRange, "layout", n.cfg.DeclRange)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot estimate stage",
			Detail: fmt.Sprintf("The estimator rejected stage %s: %s.", sp.Address, err), Subject: use}}
	}
	sp.Estimate = est
	return findingDiagnostics(est.Findings, nil, *use)
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
	if config.IsNull() || !config.IsKnown() || !config.Type().IsObjectType() || !config.Type().HasAttribute(name) {
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

func loraArg(config cty.Value) *estimate.LoRA {
	l := attr(config, argLoRA)
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
