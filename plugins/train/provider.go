package train

import (
	"context"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// Name and Version identify the plugin in plans and state.
const (
	Name    = "train"
	Version = "0.1.0"
)

// Provider serves the pretrain, finetune and eval stage types. Its zero value
// runs the trainer with the default Options and shares one set of running
// stages per process, which Stop ends; New gives a Provider of its own.
type Provider struct{ s *settings }

// settings are a Provider's options and the runs it can stop.
type settings struct {
	opts    Options
	stopper *sdk.Stopper
}

var processSettings = &settings{stopper: &sdk.Stopper{}}

// New returns a Provider with opts and its own set of running stages.
func New(opts Options) Provider {
	return Provider{s: &settings{opts: opts, stopper: &sdk.Stopper{}}}
}

func (p Provider) settings() *settings {
	if p.s == nil {
		return processSettings
	}
	return p.s
}

var common = map[string]*api.Attribute{
	"data":             {Type: cty.DynamicPseudoType, Required: true, Description: "training shards: a path, or a data_prep stage's outputs.train"},
	"steps":            {Type: cty.Number, Description: "optimizer steps to run (or set train_tokens)"},
	"train_tokens":     {Type: cty.Number, Description: "tokens to train on (or set steps)"},
	"lr":               {Type: cty.Number, Required: true, Description: "peak learning rate, above 0"},
	"min_lr":           {Type: cty.Number, Description: "learning rate at the end of the schedule"},
	"schedule":         {Type: cty.String, Description: "cosine (default), linear or constant"},
	"warmup_steps":     {Type: cty.Number, Description: "linear warm-up steps, 0 or more"},
	"weight_decay":     {Type: cty.Number, Description: "AdamW weight decay"},
	"seed":             {Type: cty.Number, Description: "random seed"},
	"checkpoint_every": {Type: cty.Number, Description: "steps between checkpoints"},
	"framework":        {Type: cty.String, Description: "how the estimator sizes the stage: gpuflow (the default, this trainer, which apply runs), gpuflow-eager (the same without torch.compile), or, to size a job for another framework, megatron, fsdp2 or pytorch-eager: such a stage plans with a warning and apply refuses it"},
	"global_batch":     {Type: cty.Number, Description: "sequences per optimizer step, for layout = \"auto\" (a layout block sets its own)"},
	"valid_data":       {Type: cty.DynamicPseudoType, Description: "validation shards, as data takes them (a data_prep stage's outputs.valid, say); by default the valid split that the data_prep stage wrote beside the training shards, if it wrote one"},
	"eval_every":       {Type: cty.Number, Description: "steps between validations; the last step is always validated"},
	"eval_batches":     {Type: cty.Number, Description: "global batches each validation reads, in order (default 8); a smaller validation set is read whole"},
	"device":           {Type: cty.String, Description: "cuda (the default), or cpu: every rank on this machine's CPU cores over gloo in fp32, a smoke test at toy size"},
}

// exportBlock asks for the trained model as Hugging Face folders.
var exportBlock = &api.NestedBlock{Nesting: api.NestingSingle, MaxItems: 1, Block: api.BlockSchema{
	Description: "Hugging Face folders to write when training ends",
	Attributes: map[string]*api.Attribute{
		"hf":        {Type: cty.String, Description: "folder for the model as transformers loads it (a finetune's with its adapters merged: set merge = true)"},
		"peft":      {Type: cty.String, Description: "folder for a finetune's LoRA adapters as PEFT loads them"},
		"tokenizer": {Type: cty.String, Description: "tokenizer file or folder to copy in; the model's own folder's tokenizer files by default"},
	},
}}

// withCommon adds the arguments every training stage takes to attrs.
func withCommon(attrs map[string]*api.Attribute) map[string]*api.Attribute {
	for k, v := range common {
		attrs[k] = v
	}
	return attrs
}

func pretrainSchema() *api.BlockSchema {
	return &api.BlockSchema{
		Description: "Pre-train a model on prepared shards, from scratch or from init.",
		Attributes: withCommon(map[string]*api.Attribute{
			"init": {Type: cty.DynamicPseudoType, Description: "weights to continue pre-training from: a Hugging Face model folder or a gpuflow checkpoint"},
		}),
		Blocks: map[string]*api.NestedBlock{"export": exportBlock},
	}
}

func finetuneSchema() *api.BlockSchema {
	attrs := withCommon(map[string]*api.Attribute{
		"base":  {Type: cty.DynamicPseudoType, Required: true, Description: "model to start from: a Hugging Face model folder, or a gpuflow checkpoint such as a pretrain stage's outputs.checkpoint"},
		"merge": {Type: cty.Bool, Description: "also save weights with the adapters merged"},
	})
	return &api.BlockSchema{
		Description: "Fine-tune a model with LoRA adapters.",
		Attributes:  attrs,
		Blocks: map[string]*api.NestedBlock{
			"export": exportBlock,
			"lora": {Nesting: api.NestingSingle, MinItems: 1, MaxItems: 1, Block: api.BlockSchema{
				Attributes: map[string]*api.Attribute{
					"rank":    {Type: cty.Number, Required: true, Description: "a whole number"},
					"alpha":   {Type: cty.Number, Required: true},
					"targets": {Type: cty.List(cty.String), Required: true, Description: "module names, at least one, e.g. q_proj"},
					"dropout": {Type: cty.Number, Description: "0 to below 1"},
				},
			}},
		},
	}
}

// contract is both stage types' declaration to the engine: they train a
// model with a layout on hardware, all three required, are estimated
// from their budget, framework and adapters, and start from the weights
// in base (finetune) or init (pretrain), which the engine checks at plan
// time against the model.
var contract = &api.StageContract{
	MetaArguments: []api.MetaArgument{{Name: api.MetaHardware, Required: true}, {Name: api.MetaModel, Required: true},
		{Name: api.MetaLayout, Required: true}},
	Estimate: &api.EstimateInputs{Work: api.WorkTrain, TrainTokens: "train_tokens", Steps: "steps", Framework: "framework",
		LoRA: "lora", GlobalBatch: "global_batch", CheckpointEvery: "checkpoint_every",
		EvalEvery: "eval_every", EvalBatches: "eval_batches", ValidData: "valid_data", DefaultEvalBatches: defaultEvalBatches},
	Weights: []string{"base", "init"},
}

// Schema describes the three stage types.
func (Provider) Schema(context.Context) (*api.Schema, error) {
	return &api.Schema{Name: Name, Version: Version, Capabilities: []string{api.CapabilityStop},
		StageTypes: map[string]*api.BlockSchema{"pretrain": pretrainSchema(), "finetune": finetuneSchema(), evalType: evalSchema()},
		Contracts:  map[string]*api.StageContract{"pretrain": contract, "finetune": contract, evalType: evalContract},
	}, nil
}

// ValidateStage checks the arguments that the schema cannot.
func (Provider) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	if req.Type == evalType {
		return validateEval(req.Config), nil
	}
	return validate(req.Type, req.Config), nil
}

// PlanStage describes the run; the engine adds memory, time and cost.
func (Provider) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	if req.Type == evalType {
		return &api.PlanResponse{Details: evalDetails(req.Config)}, nil
	}
	return &api.PlanResponse{Details: details(req.Config)}, nil
}

// ApplyStage runs the trainer under torchrun and reports its steps as
// progress and metrics; see apply.go.
func (p Provider) ApplyStage(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	s := p.settings()
	ctx, release := s.stopper.Track(ctx)
	defer release()
	if req.Type == evalType {
		return applyEval(ctx, req, sink, s.opts), nil
	}
	return apply(ctx, req, sink, s.opts), nil
}

// Stop asks every running stage to end: the trainer checkpoints at the end
// of its current step and exits.
func (p Provider) Stop(context.Context) error {
	p.settings().stopper.Stop()
	return nil
}
