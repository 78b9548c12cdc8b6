package dataprep

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Name and Version identify the plugin; the version is part of every
// data_prep stage's input hash, so it changes when output could change.
const (
	Name      = "dataprep"
	Version   = "0.1.0"
	StageType = "data_prep"
)

var stageSchema = &api.BlockSchema{
	Description: "Tokenize raw text into training shards.",
	Attributes: map[string]*api.Attribute{
		"inputs":        {Type: cty.List(cty.String), Required: true, Description: "input files or globs, relative to the workload's folder; a Hugging Face dataset snapshot folder stands for its Parquet files of dataset_split"},
		"dataset_split": {Type: cty.String, Description: `the split read from a Hugging Face dataset snapshot folder (default "train")`},
		"format":        {Type: cty.String, Description: `"jsonl" (default): a text field per line; "parquet": a text column per row; "template": each JSON line rendered through template; "chat": a conversation per JSON line or Parquet row (messages or conversations), rendered by the model's chat template, with a loss mask; "text": each file is one document`},
		"text_field":    {Type: cty.String, Description: `the JSON field, or Parquet column (a dotted path into nested records), holding the text (default "text")`},
		"template":      {Type: cty.String, Description: `Go text/template rendering a JSON record, for format "template"`},
		"chat_template": {Type: cty.String, Description: `format "chat": a tokenizer_config.json or .jinja file holding the chat template (default: chat_template.jinja beside the tokenizer, else its tokenizer_config.json)`},
		"train_on":      {Type: cty.String, Description: `format "chat": the tokens the loss mask trains, "assistant" (default: every assistant message), "last_assistant" or "all"`},
		"output_dir":    {Type: cty.String, Required: true, Description: "folder the shards and manifest.json are written to"},
		"output_format": {Type: cty.List(cty.String), Description: `"megatron" (indexed .bin/.idx, default) and/or "npy"`},
		"seed":          {Type: cty.Number, Description: "seed of the split and the shuffle (default 0)"},
		"shuffle":       {Type: cty.Bool, Description: "shuffle documents within each shard (default false)"},
		"on_error":      {Type: cty.String, Description: `"fail" (default) stops at a bad record, naming file and line; "skip" skips and counts it`},
		"workers":       {Type: cty.Number, Description: "tokenizing threads (default: all cores); the output is the same for any number"},
		"shard_tokens":  {Type: cty.Number, Description: "tokens per shard (default 100000000)"},
	},
	Blocks: map[string]*api.NestedBlock{
		"tokenizer": {Nesting: api.NestingSingle, MinItems: 1, MaxItems: 1, Block: api.BlockSchema{
			Description: "The byte-level BPE vocabulary.",
			Attributes: map[string]*api.Attribute{
				"type":          {Type: cty.String, Required: true, Description: `"tiktoken" (a rank file) or "hf" (a tokenizer.json)`},
				"path":          {Type: cty.String, Required: true, Description: "the vocabulary file; .gz is read through gzip"},
				"encoding":      {Type: cty.String, Description: "tiktoken only: r50k_base, cl100k_base, o200k_base or llama3 (default: known by its size)"},
				"bos":           {Type: cty.String, Description: `special token put before each document (default: the vocabulary's, "" for none)`},
				"eos":           {Type: cty.String, Description: `special token put after each document (default: the vocabulary's, "" for none)`},
				"parse_special": {Type: cty.Bool, Description: `read special-token text in documents as special tokens (default: true for format "template" only)`},
			},
		}},
		"split": {Nesting: api.NestingSingle, MaxItems: 1, Block: api.BlockSchema{
			Description: "Fractions of documents per split, adding up to 1 (default train = 0.99, valid = 0.01).",
			Attributes: map[string]*api.Attribute{
				"train": {Type: cty.Number},
				"valid": {Type: cty.Number},
				"test":  {Type: cty.Number},
			},
		}},
	},
}
