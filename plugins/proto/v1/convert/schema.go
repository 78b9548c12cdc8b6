package convert

import (
	"fmt"

	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/gpuflow/gpuflow/plugins/api"
	pluginv1 "github.com/gpuflow/gpuflow/plugins/proto/v1"
)

// SchemaToProto encodes a plugin's schema.
func SchemaToProto(s *api.Schema) (*pluginv1.Schema, error) {
	out := &pluginv1.Schema{
		Name:         s.Name,
		Version:      s.Version,
		Capabilities: s.Capabilities,
		StageTypes:   make(map[string]*pluginv1.Schema_Block, len(s.StageTypes)),
	}
	for name, b := range s.StageTypes {
		pb, err := blockToProto(b)
		if err != nil {
			return nil, fmt.Errorf("stage type %q: %w", name, err)
		}
		out.StageTypes[name] = pb
	}
	if len(s.Contracts) > 0 {
		out.Contracts = make(map[string]*pluginv1.StageContract, len(s.Contracts))
	}
	for name, c := range s.Contracts {
		out.Contracts[name] = contractToProto(c)
	}
	return out, nil
}

func contractToProto(c *api.StageContract) *pluginv1.StageContract {
	out := &pluginv1.StageContract{Weights: c.Weights, Files: c.Files}
	for _, m := range c.MetaArguments {
		out.MetaArguments = append(out.MetaArguments, &pluginv1.StageContract_MetaArgument{Name: m.Name, Required: m.Required})
	}
	if e := c.Estimate; e != nil {
		out.Estimate = &pluginv1.StageContract_EstimateInputs{Work: e.Work, TrainTokens: e.TrainTokens, Steps: e.Steps,
			Framework: e.Framework, Lora: e.LoRA, GlobalBatch: e.GlobalBatch, CheckpointEvery: e.CheckpointEvery,
			EvalEvery: e.EvalEvery, EvalBatches: e.EvalBatches, ValidData: e.ValidData, DefaultEvalBatches: e.DefaultEvalBatches}
	}
	return out
}

func contractFromProto(c *pluginv1.StageContract) *api.StageContract {
	out := &api.StageContract{Weights: c.GetWeights(), Files: c.GetFiles()}
	for _, m := range c.GetMetaArguments() {
		out.MetaArguments = append(out.MetaArguments, api.MetaArgument{Name: m.GetName(), Required: m.GetRequired()})
	}
	if e := c.GetEstimate(); e != nil {
		out.Estimate = &api.EstimateInputs{Work: e.GetWork(), TrainTokens: e.GetTrainTokens(), Steps: e.GetSteps(),
			Framework: e.GetFramework(), LoRA: e.GetLora(), GlobalBatch: e.GetGlobalBatch(), CheckpointEvery: e.GetCheckpointEvery(),
			EvalEvery: e.GetEvalEvery(), EvalBatches: e.GetEvalBatches(), ValidData: e.GetValidData(), DefaultEvalBatches: e.GetDefaultEvalBatches()}
	}
	return out
}

func blockToProto(b *api.BlockSchema) (*pluginv1.Schema_Block, error) {
	out := &pluginv1.Schema_Block{
		Description: b.Description,
		Attributes:  make(map[string]*pluginv1.Schema_Attribute, len(b.Attributes)),
		Blocks:      make(map[string]*pluginv1.Schema_NestedBlock, len(b.Blocks)),
	}
	for name, a := range b.Attributes {
		ty, err := ctyjson.MarshalType(a.Type)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
		out.Attributes[name] = &pluginv1.Schema_Attribute{
			Type:        ty,
			Required:    a.Required,
			Sensitive:   a.Sensitive,
			Description: a.Description,
		}
	}
	for name, nb := range b.Blocks {
		inner, err := blockToProto(&nb.Block)
		if err != nil {
			return nil, fmt.Errorf("block %q: %w", name, err)
		}
		out.Blocks[name] = &pluginv1.Schema_NestedBlock{
			Nesting:  nestingToProto(nb.Nesting),
			Block:    inner,
			MinItems: int64(nb.MinItems),
			MaxItems: int64(nb.MaxItems),
		}
	}
	return out, nil
}

func nestingToProto(n api.Nesting) pluginv1.Schema_NestedBlock_Nesting {
	if n == api.NestingList {
		return pluginv1.Schema_NestedBlock_LIST
	}
	return pluginv1.Schema_NestedBlock_SINGLE
}

// SchemaFromProto decodes what SchemaToProto encoded.
func SchemaFromProto(s *pluginv1.Schema) (*api.Schema, error) {
	out := &api.Schema{
		Name:         s.GetName(),
		Version:      s.GetVersion(),
		Capabilities: s.GetCapabilities(),
		StageTypes:   make(map[string]*api.BlockSchema, len(s.GetStageTypes())),
	}
	for name, pb := range s.GetStageTypes() {
		b, err := blockFromProto(pb)
		if err != nil {
			return nil, fmt.Errorf("stage type %q: %w", name, err)
		}
		out.StageTypes[name] = b
	}
	if len(s.GetContracts()) > 0 {
		out.Contracts = make(map[string]*api.StageContract, len(s.GetContracts()))
	}
	for name, c := range s.GetContracts() {
		out.Contracts[name] = contractFromProto(c)
	}
	return out, nil
}

func blockFromProto(pb *pluginv1.Schema_Block) (*api.BlockSchema, error) {
	out := &api.BlockSchema{Description: pb.GetDescription()}
	if len(pb.GetAttributes()) > 0 {
		out.Attributes = make(map[string]*api.Attribute, len(pb.GetAttributes()))
	}
	for name, pa := range pb.GetAttributes() {
		ty, err := ctyjson.UnmarshalType(pa.GetType())
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
		out.Attributes[name] = &api.Attribute{
			Type:        ty,
			Required:    pa.GetRequired(),
			Sensitive:   pa.GetSensitive(),
			Description: pa.GetDescription(),
		}
	}
	if len(pb.GetBlocks()) > 0 {
		out.Blocks = make(map[string]*api.NestedBlock, len(pb.GetBlocks()))
	}
	for name, pnb := range pb.GetBlocks() {
		inner, err := blockFromProto(pnb.GetBlock())
		if err != nil {
			return nil, fmt.Errorf("block %q: %w", name, err)
		}
		nesting := api.NestingSingle
		if pnb.GetNesting() == pluginv1.Schema_NestedBlock_LIST {
			nesting = api.NestingList
		}
		out.Blocks[name] = &api.NestedBlock{
			Nesting:  nesting,
			Block:    *inner,
			MinItems: int(pnb.GetMinItems()),
			MaxItems: int(pnb.GetMaxItems()),
		}
	}
	return out, nil
}
