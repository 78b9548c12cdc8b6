package dsl

import "github.com/hashicorp/hcl/v2"

// Block type names of the top level.
const (
	blockVariable = "variable"
	blockLocals   = "locals"
	blockOutput   = "output"
	blockHardware = "hardware"
	blockModel    = "model"
	blockLayout   = "layout"
	blockDataset  = "dataset"
	blockStage    = "stage"
	blockExecutor = "executor"
)

var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: blockVariable, LabelNames: []string{"name"}},
		{Type: blockLocals},
		{Type: blockOutput, LabelNames: []string{"name"}},
		{Type: blockHardware, LabelNames: []string{"name"}},
		{Type: blockModel, LabelNames: []string{"name"}},
		{Type: blockLayout, LabelNames: []string{"name"}},
		{Type: blockDataset, LabelNames: []string{"name"}},
		{Type: blockStage, LabelNames: []string{"type", "name"}},
		{Type: blockExecutor, LabelNames: []string{"kind", "name"}},
	},
}

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
		{Name: "sensitive"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message", Required: true},
	},
}

var outputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "value", Required: true},
		{Name: "description"},
		{Name: "sensitive"},
	},
}

// stageMetaSchema holds the stage arguments the engine owns (its
// meta-arguments); everything else in a stage body belongs to the plugin.
var stageMetaSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "depends_on"},
		{Name: "nccl_env"},
		{Name: "executor"},
		{Name: "hardware"},
		{Name: "model"},
		{Name: "layout"},
	},
}

// UseArguments are the meta-arguments that name a block the stage uses:
// hardware.NAME, model.NAME and layout.NAME (or layout = "auto"). Which
// of them a stage type takes is its plugin's to say.
var UseArguments = []string{"hardware", "model", "layout"}
