package api

// The engine's meta-arguments: stage arguments the engine decodes and
// resolves itself (a hardware profile, a model shape, a placed layout) for
// the stage types that take them. A stage type names those it takes in its
// StageContract; the engine adds their values to the stage's config under
// these names, so the plugin reads them like any other argument.
const (
	MetaHardware = "hardware"
	MetaModel    = "model"
	MetaLayout   = "layout"
)

// MetaArgumentNames lists the engine's meta-arguments.
var MetaArgumentNames = []string{MetaHardware, MetaModel, MetaLayout}

// WorkTrain is the kind of work of a training stage: the estimator
// predicts its memory, step time, throughput, duration and cost.
const WorkTrain = "train"

// WorkForward is the kind of work of a stage that runs the model forward
// only (an evaluation): no gradients, no optimizer states, a forward pass
// per token of its budget.
const WorkForward = "forward"

// StageContract is what a stage type declares to the engine beyond the
// schema of its body: the meta-arguments it takes and what it contributes
// to the estimate.
type StageContract struct {
	MetaArguments []MetaArgument
	// Estimate, when set, has the engine estimate the stage. It needs the
	// hardware, model and layout meta-arguments.
	Estimate *EstimateInputs
	// Weights name top-level attributes that hold a folder of model
	// weights the stage starts from (a finetune's base, a pretrain's
	// init). Where one holds a path known at plan time to a Hugging Face
	// model folder, the engine checks the folder (config.json and the
	// safetensors headers, never the weights) against the stage's model,
	// so a broken or mismatched folder fails the plan at that attribute.
	Weights []string
	// Files name attributes, top-level or inside a nested block as
	// BLOCK.ATTR (multiple_choice.path), that hold the path of a file the
	// stage reads. The engine hashes each file's bytes into the stage's
	// input hash, so that editing the file makes the next apply run the
	// stage again; a file it cannot read is an error at its attribute.
	Files []string
}

// MetaArgument is one of the engine's meta-arguments a stage type takes.
type MetaArgument struct {
	Name     string
	Required bool
}

// EstimateInputs name the top-level attributes of a stage body that carry
// what the stage contributes to the estimate. An empty name means the
// stage has no such attribute; the precision comes from the layout.
type EstimateInputs struct {
	// Work is the kind of work the estimator models: WorkTrain or
	// WorkForward.
	Work string
	// TrainTokens names a number: the tokens to train on (or, for
	// WorkForward, to run forward).
	TrainTokens string
	// Steps names a number: the optimizer steps, read where no token
	// budget is set.
	Steps string
	// Framework names a string: one of the estimator's frameworks.
	Framework string
	// LoRA names an object with rank (a number) and targets (a list of
	// strings): adapters trained on a frozen model.
	LoRA string
	// GlobalBatch names a number: the sequences per step that a
	// layout = "auto" search keeps fixed.
	GlobalBatch string
	// CheckpointEvery names a number: the steps between checkpoints,
	// whose writing the estimate counts against the run's goodput.
	CheckpointEvery string
	// EvalEvery names a number: the steps between validations, forward
	// passes over held-out data; ValidData names the held-out data (any
	// value). Where either is set the estimate counts the validations:
	// one every EvalEvery steps (none between without it) and one after
	// the last step, each over EvalBatches global batches (a number),
	// DefaultEvalBatches where that is unset.
	EvalEvery, EvalBatches, ValidData string
	DefaultEvalBatches                int64
}

// Takes returns the stage type's declaration of the meta-argument name,
// and whether it takes it at all.
func (c *StageContract) Takes(name string) (MetaArgument, bool) {
	if c == nil {
		return MetaArgument{}, false
	}
	for _, m := range c.MetaArguments {
		if m.Name == name {
			return m, true
		}
	}
	return MetaArgument{}, false
}
