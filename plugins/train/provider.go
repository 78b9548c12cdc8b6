package train

import (
	"context"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Name and Version identify the plugin in plans and state.
const (
	Name    = "train"
	Version = "0.1.0"
)

// Provider serves the pretrain and finetune stage types.
type Provider struct{}

var common = map[string]*api.Attribute{
	"hardware":         {Type: cty.DynamicPseudoType, Required: true, Description: "hardware.NAME the stage runs on"},
	"model":            {Type: cty.DynamicPseudoType, Required: true, Description: "model.NAME to train"},
	"layout":           {Type: cty.DynamicPseudoType, Required: true, Description: "layout.NAME, or \"auto\""},
	"data":             {Type: cty.DynamicPseudoType, Required: true, Description: "training shards: a path, or a data_prep stage's outputs.train"},
	"steps":            {Type: cty.Number, Description: "optimizer steps to run (or set train_tokens)"},
	"train_tokens":     {Type: cty.Number, Description: "tokens to train on (or set steps)"},
	"lr":               {Type: cty.Number, Required: true, Description: "peak learning rate"},
	"min_lr":           {Type: cty.Number, Description: "learning rate at the end of the schedule"},
	"schedule":         {Type: cty.String, Description: "cosine (default), linear or constant"},
	"warmup_steps":     {Type: cty.Number, Description: "linear warm-up steps"},
	"weight_decay":     {Type: cty.Number, Description: "AdamW weight decay"},
	"seed":             {Type: cty.Number, Description: "random seed"},
	"checkpoint_every": {Type: cty.Number, Description: "steps between checkpoints"},
	"framework":        {Type: cty.String, Description: "activation-memory accounting to plan with: megatron (default), fsdp2 or pytorch-eager"},
	"global_batch":     {Type: cty.Number, Description: "sequences per optimizer step, for layout = \"auto\" (a layout block sets its own)"},
}

func pretrainSchema() *api.BlockSchema {
	return &api.BlockSchema{Description: "Pre-train a model from scratch on prepared shards.", Attributes: common}
}

func finetuneSchema() *api.BlockSchema {
	attrs := map[string]*api.Attribute{
		"base":  {Type: cty.DynamicPseudoType, Required: true, Description: "checkpoint to start from: a path or a pretrain stage's outputs.checkpoint"},
		"merge": {Type: cty.Bool, Description: "also save weights with the adapters merged"},
	}
	for k, v := range common {
		attrs[k] = v
	}
	return &api.BlockSchema{
		Description: "Fine-tune a checkpoint with LoRA adapters.",
		Attributes:  attrs,
		Blocks: map[string]*api.NestedBlock{
			"lora": {Nesting: api.NestingSingle, MinItems: 1, MaxItems: 1, Block: api.BlockSchema{
				Attributes: map[string]*api.Attribute{
					"rank":    {Type: cty.Number, Required: true},
					"alpha":   {Type: cty.Number, Required: true},
					"targets": {Type: cty.List(cty.String), Required: true, Description: "module names, e.g. q_proj"},
					"dropout": {Type: cty.Number},
				},
			}},
		},
	}
}

// Schema describes both stage types.
func (Provider) Schema(context.Context) (*api.Schema, error) {
	return &api.Schema{Name: Name, Version: Version, StageTypes: map[string]*api.BlockSchema{
		"pretrain": pretrainSchema(),
		"finetune": finetuneSchema(),
	}}, nil
}

// ValidateStage checks the training arguments that the schema cannot.
func (Provider) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	return validate(req.Type, req.Config), nil
}

// PlanStage describes the run; the engine adds memory, time and cost.
func (Provider) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	return &api.PlanResponse{Details: details(req.Config)}, nil
}

// ApplyStage cannot run training yet: the trainer is issue #8.
func (Provider) ApplyStage(_ context.Context, req *api.ApplyRequest, _ api.EventSink) (*api.ApplyResponse, error) {
	return &api.ApplyResponse{Diagnostics: api.Diagnostics{{
		Severity: api.Error,
		Summary:  fmt.Sprintf("%s stages cannot run yet", req.Type),
		Detail:   "This gpuflow plans training stages but does not ship the trainer yet (issue #8). Plan and review them now; apply them with a later release.",
	}}}, nil
}

// Stop has nothing to stop.
func (Provider) Stop(context.Context) error { return nil }
