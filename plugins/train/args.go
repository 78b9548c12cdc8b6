package train

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// stageArgs is a training stage body as the engine hands it over: the
// stage type's arguments, and the model, layout and hardware
// meta-arguments as the values of model.NAME, layout.NAME and
// hardware.NAME. Budgets and counts are numbers as written; the run's
// config rounds them. A pointer is nil where the body sets nothing.
type stageArgs struct {
	Model           modelConfig    `cty:"model"`
	Layout          api.Layout     `cty:"layout"`
	Hardware        hardwareConfig `cty:"hardware"`
	Data            cty.Value      `cty:"data"`
	ValidData       cty.Value      `cty:"valid_data"`
	EvalEvery       *float64       `cty:"eval_every"`
	EvalBatches     float64        `cty:"eval_batches"`
	Steps           *float64       `cty:"steps"`
	TrainTokens     *float64       `cty:"train_tokens"`
	LR              float64        `cty:"lr"`
	MinLR           *float64       `cty:"min_lr"`
	Schedule        string         `cty:"schedule"`
	WarmupSteps     *float64       `cty:"warmup_steps"`
	WeightDecay     float64        `cty:"weight_decay"`
	Seed            float64        `cty:"seed"`
	CheckpointEvery *float64       `cty:"checkpoint_every"`
	Framework       string         `cty:"framework"`
	Device          string         `cty:"device"`
	LoRA            *loraConfig    `cty:"lora"`
	Merge           bool           `cty:"merge"`
	Base            string         `cty:"base"`
	Init            string         `cty:"init"`
	Export          *exportArgs    `cty:"export"`
	// Unknown lists what is known only at apply time, which validation
	// leaves alone.
	Unknown sdk.Unknowns
}

// exportArgs is the export block as written.
type exportArgs struct {
	HF        *string `cty:"hf"`
	PEFT      *string `cty:"peft"`
	Tokenizer string  `cty:"tokenizer"`
}

// defaultArgs holds what an argument left out means, as docs/training.md
// lists it: a preset model is a Llama with SwiGLU, a layout's degrees are
// 1, and a run trains on GPUs with gpuflow's compiled trainer.
func defaultArgs() stageArgs {
	return stageArgs{
		Model:    modelConfig{Activation: "swiglu", Architecture: presetArchitecture, RopeTheta: presetRopeTheta, NormEps: presetNormEps},
		Layout:   api.Layout{TP: 1, PP: 1, DP: 1, CP: 1, VP: 1, Recompute: "none", Precision: "bf16"},
		Hardware: hardwareConfig{Nodes: 1, TFLOPS: map[string]float64{}, Multicast: true},
		Data:     cty.NullVal(cty.DynamicPseudoType), ValidData: cty.NullVal(cty.DynamicPseudoType),
		EvalBatches: defaultEvalBatches,
		Schedule:    defaultSchedule, WeightDecay: defaultWeightDecay, Seed: defaultSeed,
		Framework: frameworkCompiled, Device: deviceCUDA,
	}
}

// metaArguments are the engine's values a run cannot do without, with an
// example of each for the message.
var metaArguments = []struct{ name, example string }{
	{"model", "a model, e.g. model.small"},
	{"layout", "a layout, e.g. layout.data_parallel"},
	{"hardware", "a hardware block, e.g. hardware.lab"},
}

// decodeArgs reads a training stage body, which a run cannot do without
// its meta-arguments.
func decodeArgs(c cty.Value) (stageArgs, api.Diagnostics) {
	if diags := checkMeta(c); diags.HasErrors() {
		return defaultArgs(), diags
	}
	return readArgs(c)
}

// readArgs reads what the body holds over the defaults.
func readArgs(c cty.Value) (stageArgs, api.Diagnostics) {
	args := defaultArgs()
	diags := sdk.Decode(c, &args)
	if args.Model.Activation == activationGELU {
		args.Model.Architecture = gpt2Architecture // GELU is GPT-2 in gpuflow's trainer
	}
	return args, diags
}

// metaValues are the meta-arguments as the body holds them.
type metaValues struct {
	Model    cty.Value `cty:"model"`
	Layout   cty.Value `cty:"layout"`
	Hardware cty.Value `cty:"hardware"`
	Unknown  sdk.Unknowns
}

// checkMeta: a meta-argument that is missing or no object is reported as
// such rather than decoded; one not known yet is not checked.
func checkMeta(c cty.Value) api.Diagnostics {
	var meta metaValues
	diags := sdk.Decode(c, &meta)
	for _, m := range metaArguments {
		v := map[string]cty.Value{"model": meta.Model, "layout": meta.Layout, "hardware": meta.Hardware}[m.name]
		if meta.Unknown.Attr(m.name) || v != cty.NilVal && (v.Type().IsObjectType() || v.Type().IsMapType()) {
			continue
		}
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid " + m.name,
			Detail: fmt.Sprintf("%s must be %s.", m.name, m.example), Path: cty.GetAttrPath(m.name)})
	}
	return diags
}
