package train

import (
	"fmt"
	"strconv"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// The eval stage type measures a model without training it: loss and
// perplexity on Megatron shards, multiple-choice accuracy by
// log-likelihood, and completions of prompts. It lives in this plugin
// because it loads weights and launches ranks as training does.
const evalType = "eval"

func evalSchema() *api.BlockSchema {
	return &api.BlockSchema{
		Description: "Evaluate a model: loss and perplexity on shards, multiple-choice accuracy, completions of prompts.",
		Attributes: map[string]*api.Attribute{
			"weights": {Type: cty.DynamicPseudoType, Required: true, Description: "the model to evaluate: a Hugging Face model folder, a gpuflow checkpoint such as stage.pretrain.NAME.outputs.checkpoint, or with base a LoRA fine-tune's checkpoint or adapters"},
			"base":    {Type: cty.DynamicPseudoType, Description: "for a LoRA fine-tune's weights: the base model it was trained on (a Hugging Face folder or a gpuflow checkpoint)"},
			"data":    {Type: cty.DynamicPseudoType, Description: "Megatron shards to measure loss and perplexity on: a path, or a data_prep stage's outputs.valid"},
			"tokens":  {Type: cty.Number, Description: "read at most this many tokens of data (all by default); the plan's estimate counts them"},
			"seed":    {Type: cty.Number, Description: "seed of sampled completions"},
			"device":  common["device"],
		},
		Blocks: map[string]*api.NestedBlock{
			"tokenizer": {Nesting: api.NestingSingle, MaxItems: 1, Block: api.BlockSchema{
				Description: "how prompts and questions become tokens; the model folder's tokenizer.json by default",
				Attributes: map[string]*api.Attribute{
					"type":     {Type: cty.String, Required: true, Description: `"tiktoken" (a rank file) or "hf" (a tokenizer.json), as data_prep takes them`},
					"path":     {Type: cty.String, Required: true, Description: "the vocabulary file"},
					"encoding": {Type: cty.String, Description: "a tiktoken rank file's preset (r50k_base, cl100k_base, o200k_base, ...); read from the file's size when unset"},
				},
			}},
			"multiple_choice": {Nesting: api.NestingSingle, MaxItems: 1, Block: api.BlockSchema{
				Description: "multiple-choice questions scored by the log-likelihood of each choice",
				Attributes: map[string]*api.Attribute{
					"path": {Type: cty.String, Required: true, Description: `a JSONL file of {"context": "...", "choices": ["...", ...], "label": INDEX}`},
				},
			}},
			"generate": {Nesting: api.NestingSingle, MaxItems: 1, Block: api.BlockSchema{
				Description: "completions of prompts, written as JSONL",
				Attributes: map[string]*api.Attribute{
					"prompts":        {Type: cty.String, Required: true, Description: `a JSONL file of {"prompt": "..."}`},
					"max_new_tokens": {Type: cty.Number, Description: "tokens to add at most (64 by default)"},
					"temperature":    {Type: cty.Number, Description: "0 (the default) picks the likeliest token; above 0 samples"},
					"top_p":          {Type: cty.Number, Description: "sample from the likeliest tokens whose probability reaches top_p (1 by default: all)"},
				},
			}},
			"expect": {Nesting: api.NestingSingle, MaxItems: 1, Block: api.BlockSchema{
				Description: "thresholds the stage fails below",
				Attributes: map[string]*api.Attribute{
					"max_valid_loss":    {Type: cty.Number, Description: "highest acceptable loss on data (nats per token)"},
					"max_perplexity":    {Type: cty.Number, Description: "highest acceptable perplexity on data"},
					"min_accuracy":      {Type: cty.Number, Description: "lowest acceptable multiple-choice accuracy, 0 to 1"},
					"min_accuracy_norm": {Type: cty.Number, Description: "lowest acceptable length-normalised accuracy, 0 to 1"},
				},
			}},
		},
	}
}

// evalContract: an eval stage runs a model with a layout on hardware, the
// estimate counts a forward pass over its tokens, and its questions,
// prompts and tokenizer files are part of its input hash, so that editing
// one runs the stage again.
var evalContract = &api.StageContract{
	MetaArguments: []api.MetaArgument{{Name: api.MetaHardware, Required: true}, {Name: api.MetaModel, Required: true},
		{Name: api.MetaLayout, Required: true}},
	Estimate: &api.EstimateInputs{Work: api.WorkForward, TrainTokens: "tokens"},
	Files:    []string{"multiple_choice.path", "generate.prompts", "tokenizer.path"},
}

// expectations name each threshold, the measure it bounds, and whether
// it is an upper bound, and the block that measures it.
var expectations = []struct {
	attr, measure, block string
	upper                bool
}{
	{"max_valid_loss", "valid_loss", "data", true},
	{"max_perplexity", "valid_perplexity", "data", true},
	{"min_accuracy", "accuracy", "multiple_choice", false},
	{"min_accuracy_norm", "accuracy_norm", "multiple_choice", false},
}

// validateEval checks what the schema cannot: something to measure, and a
// measurement behind every threshold.
func validateEval(c cty.Value) api.Diagnostics {
	args, diags := readEvalArgs(c)
	bad := func(path cty.Path, summary, detail string) {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: summary, Detail: detail, Path: path})
	}
	has := map[string]bool{
		"data":            !args.Data.IsNull() || args.Unknown.Attr("data"),
		"multiple_choice": args.MultipleChoice != nil || args.Unknown.Attr("multiple_choice"),
		"generate":        args.Generate != nil || args.Unknown.Attr("generate"),
	}
	if !has["data"] && !has["multiple_choice"] && !has["generate"] {
		bad(nil, "Nothing to evaluate", "An eval stage measures at least one of: data (loss and perplexity on shards), a multiple_choice block, a generate block.")
	}
	if args.Tokens != nil && *args.Tokens <= 0 {
		bad(cty.GetAttrPath("tokens"), "Invalid tokens", "tokens must be greater than zero.")
	}
	if args.Device != deviceCUDA && args.Device != deviceCPU {
		bad(cty.GetAttrPath("device"), "Unknown device", fmt.Sprintf("device %q is not %q or %q.", args.Device, deviceCUDA, deviceCPU))
	}
	diags = append(diags, validateGenerate(args.Generate)...)
	thresholds := args.Expect.thresholds()
	for _, x := range expectations {
		f, ok := thresholds[x.attr]
		if !ok {
			continue
		}
		at := cty.GetAttrPath("expect").GetAttr(x.attr)
		if !has[x.block] {
			bad(at, "Nothing measures "+x.measure, fmt.Sprintf("%s bounds %s, which only %s measures; add it or remove %s.", x.attr, x.measure, x.block, x.attr))
		}
		if !x.upper && (f < 0 || f > 1) {
			bad(at, "Invalid "+x.attr, x.attr+" is a fraction from 0 to 1.")
		}
	}
	return diags
}

// validateGenerate checks the generate block's values, its defaults
// standing in for what it leaves out or does not know yet.
func validateGenerate(g *generateArgs) api.Diagnostics {
	if g == nil {
		return nil
	}
	var diags api.Diagnostics
	at := cty.GetAttrPath("generate")
	check := func(attr string, ok bool, want string) {
		if !ok {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid " + attr, Detail: attr + " must be " + want + ".", Path: at.GetAttr(attr)})
		}
	}
	check("max_new_tokens", g.MaxNewTokens >= 1, "a whole number, 1 or more")
	check("temperature", g.Temperature >= 0, "0 or more")
	check("top_p", g.TopP > 0 && g.TopP <= 1, "above 0 and at most 1")
	return diags
}

// evalDetails describe the stage in the plan; "?" stands for what is
// known only at apply time.
func evalDetails(c cty.Value) []api.Detail {
	args, _ := readEvalArgs(c)
	text := func(s string, path cty.Path) string {
		if args.Unknown.Has(path) {
			return "?"
		}
		return s
	}
	var out []api.Detail
	if !args.Data.IsNull() {
		budget := "all tokens"
		if args.Tokens != nil {
			budget = strconv.FormatFloat(*args.Tokens, 'g', 6, 64) + " tokens"
		}
		out = append(out, api.Detail{Key: "loss", Value: "on shards, " + budget})
	}
	if m := args.MultipleChoice; m != nil {
		out = append(out, api.Detail{Key: "multiple choice", Value: text(m.Path, cty.GetAttrPath("multiple_choice").GetAttr("path"))})
	}
	if g := args.Generate; g != nil {
		out = append(out, api.Detail{Key: "generate", Value: text(g.Prompts, cty.GetAttrPath("generate").GetAttr("prompts"))})
	}
	thresholds := args.Expect.thresholds()
	for _, x := range expectations {
		if f, ok := thresholds[x.attr]; ok {
			out = append(out, api.Detail{Key: "expect", Value: x.attr + " " + strconv.FormatFloat(f, 'g', 6, 64)})
		}
	}
	return out
}
