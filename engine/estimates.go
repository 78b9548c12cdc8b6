package engine

import (
	"cmp"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/state"
	"github.com/gpuflow/gpuflow/hardware"
	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
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
	inputs, d := readEstimateInputs(n.plugin.Contract, config)
	if diags := useDiags(n, d); diags.HasErrors() {
		return diags
	}
	in := estimate.Input{Model: sp.Model.Shape, Layout: sp.Layout.Layout, Hardware: hw, Placement: sp.Placement,
		Framework: inputs.framework, LoRA: inputs.lora, TrainTokens: inputs.trainTokens, TrainSteps: inputs.trainSteps,
		CheckpointEvery: inputs.checkpointEvery, Validation: inputs.validation, Calibration: p.opts.Calibration.For(calibrationKey(hw)),
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
	// validation is nil for a stage that sets neither its validations'
	// interval nor their data.
	validation *estimate.Validation
}

// estimateArgs are the attributes a contract may name, under the
// estimator's names for them; counts are numbers as written.
type estimateArgs struct {
	Framework       string    `cty:"framework"`
	LoRA            *loraArgs `cty:"lora"`
	TrainTokens     float64   `cty:"train_tokens"`
	Steps           float64   `cty:"steps"`
	GlobalBatch     float64   `cty:"global_batch"`
	CheckpointEvery float64   `cty:"checkpoint_every"`
	EvalEvery       float64   `cty:"eval_every"`
	EvalBatches     float64   `cty:"eval_batches"`
	ValidData       cty.Value `cty:"valid_data"`
}

type loraArgs struct {
	Rank    float64  `cty:"rank"`
	Targets []string `cty:"targets"`
}

// readEstimateInputs reads the attributes the contract names; the budget
// is the token budget where one is set, else the step budget. A value of
// the wrong type is an error at the body's attribute.
func readEstimateInputs(c *api.StageContract, config cty.Value) (estimateInputs, api.Diagnostics) {
	if c == nil || c.Estimate == nil {
		return estimateInputs{}, nil
	}
	e := c.Estimate
	names := map[string]string{"framework": e.Framework, "lora": e.LoRA, "train_tokens": e.TrainTokens, "steps": e.Steps,
		"global_batch": e.GlobalBatch, "checkpoint_every": e.CheckpointEvery, "eval_every": e.EvalEvery, "eval_batches": e.EvalBatches,
		"valid_data": e.ValidData}
	var a estimateArgs
	diags := sdk.Decode(renamed(config, names), &a)
	for i := range diags {
		diags[i].Path = bodyPath(diags[i].Path, names)
	}
	in := estimateInputs{framework: a.Framework, globalBatch: int(a.GlobalBatch), checkpointEvery: int64(a.CheckpointEvery)}
	if a.LoRA != nil {
		in.lora = &estimate.LoRA{Rank: int(a.LoRA.Rank), Targets: a.LoRA.Targets}
	}
	if a.EvalEvery > 0 || (a.ValidData != cty.NilVal && !a.ValidData.IsNull()) {
		in.validation = &estimate.Validation{Every: int64(a.EvalEvery), Batches: cmp.Or(int64(a.EvalBatches), e.DefaultEvalBatches)}
	}
	if a.TrainTokens > 0 {
		in.trainTokens = a.TrainTokens
	} else if a.Steps > 0 {
		in.trainSteps = int64(a.Steps)
	}
	return in, diags
}

// renamed is the body's attributes that names maps to, under their keys.
func renamed(config cty.Value, names map[string]string) cty.Value {
	attrs := map[string]cty.Value{}
	if config.IsNull() || !config.IsKnown() || !config.Type().IsObjectType() {
		return cty.EmptyObjectVal
	}
	for key, name := range names {
		if name != "" && config.Type().HasAttribute(name) {
			attrs[key] = config.GetAttr(name)
		}
	}
	return cty.ObjectVal(attrs)
}

// bodyPath turns a path under renamed's keys into one into the body.
func bodyPath(path cty.Path, names map[string]string) cty.Path {
	if len(path) == 0 {
		return path
	}
	if step, ok := path[0].(cty.GetAttrStep); ok {
		return append(cty.GetAttrPath(names[step.Name]), path[1:]...)
	}
	return path
}

// calibrationKey is the name measurements are filed under: the built-in
// profile a hardware block starts from, or the block's own name.
func calibrationKey(hw *hardware.Profile) string {
	if hw.BaseProfile != "" {
		return hw.BaseProfile
	}
	return hw.Name
}

// prediction keeps what a run can be checked against; nil for a stage the
// plan did not estimate.
func prediction(e *estimate.Estimate) *state.Prediction {
	if e == nil {
		return nil
	}
	return &state.Prediction{MemoryBytes: e.Memory.Total, StepTimeS: e.StepTimeS, TokensPerS: e.TokensPerS, MFU: e.MFU}
}
