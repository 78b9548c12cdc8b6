package dataprep

import (
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
	"github.com/gpuflow/gpuflow/plugins/dataprep/chat"
	"github.com/gpuflow/gpuflow/plugins/dataprep/input"
	"github.com/gpuflow/gpuflow/plugins/dataprep/pipeline"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// config is a data_prep stage body, decoded. Fields whose value is not
// known yet (at plan time) keep their defaults.
type config struct {
	Inputs []string
	// DatasetSplit picks the split of a Hugging Face dataset snapshot.
	DatasetSplit string
	Format       input.Format
	TextField    string
	Template     string
	// ChatTemplate is the chat template's file for format "chat" ("" for
	// the one beside the tokenizer); TrainOn says what the loss masks mark.
	ChatTemplate  string
	TrainOn       string
	Tokenizer     tokenizerConfig
	OutputDir     string
	OutputFormats []string
	Split         map[string]float64
	Seed          uint64
	Shuffle       bool
	SkipErrors    bool
	Workers       int
	ShardTokens   int64
	// Pending names the attributes not wholly known yet (at plan time).
	Pending map[string]bool
}

type tokenizerConfig struct {
	Type     bpe.Kind
	Path     string
	Encoding string
	// BOS and EOS are nil when unset: the vocabulary's default applies.
	BOS, EOS     *string
	ParseSpecial *bool
}

func defaultConfig() config {
	return config{
		Format:        input.FormatJSONL,
		DatasetSplit:  "train",
		TextField:     "text",
		TrainOn:       chat.TrainAssistant,
		OutputFormats: []string{pipeline.FormatMegatron},
		Split:         map[string]float64{"train": 0.99, "valid": 0.01},
		ShardTokens:   pipeline.DefaultShardTokens,
	}
}

// body is a data_prep stage body as written; what it leaves out is nil.
type body struct {
	Inputs       []string       `cty:"inputs"`
	DatasetSplit *string        `cty:"dataset_split"`
	Format       *string        `cty:"format"`
	TextField    *string        `cty:"text_field"`
	Template     *string        `cty:"template"`
	ChatTemplate *string        `cty:"chat_template"`
	TrainOn      *string        `cty:"train_on"`
	Tokenizer    *tokenizerBody `cty:"tokenizer"`
	OutputDir    *string        `cty:"output_dir"`
	OutputFormat []string       `cty:"output_format"`
	Split        *splitBody     `cty:"split"`
	Seed         *big.Float     `cty:"seed"`
	Shuffle      bool           `cty:"shuffle"`
	OnError      string         `cty:"on_error"`
	Workers      *big.Float     `cty:"workers"`
	ShardTokens  *big.Float     `cty:"shard_tokens"`
	Unknown      sdk.Unknowns
}

type tokenizerBody struct {
	Type         string  `cty:"type"`
	Path         string  `cty:"path"`
	Encoding     *string `cty:"encoding"`
	BOS          *string `cty:"bos"`
	EOS          *string `cty:"eos"`
	ParseSpecial *bool   `cty:"parse_special"`
}

type splitBody struct {
	Train *float64 `cty:"train"`
	Valid *float64 `cty:"valid"`
	Test  *float64 `cty:"test"`
}

// decoder collects diagnostics while checking a body.
type decoder struct {
	diags api.Diagnostics
}

func (d *decoder) errorf(path cty.Path, summary, format string, args ...any) {
	d.diags = append(d.diags, api.Diagnostic{Severity: api.Error, Summary: summary, Detail: fmt.Sprintf(format, args...), Path: path})
}

// decodeConfig decodes and checks a body. At plan time an attribute that
// is not wholly known yet keeps its default and is not checked.
func decodeConfig(v cty.Value) (config, api.Diagnostics) {
	cfg := defaultConfig()
	if v.IsNull() || !v.IsKnown() {
		return cfg, nil
	}
	var b body
	d := &decoder{diags: sdk.Decode(v, &b)}
	pending := pendingAttrs(b.Unknown)
	cfg.Pending = pending
	if pending["tokenizer"] {
		b.Tokenizer = nil // a block not wholly known keeps its defaults, as a value does
	}
	if pending["split"] {
		b.Split = nil
	}
	if b.Inputs != nil {
		cfg.Inputs = b.Inputs
		if len(cfg.Inputs) == 0 {
			d.errorf(cty.GetAttrPath("inputs"), "No inputs", `Name at least one input file or glob, like inputs = ["data/*.jsonl"].`)
		}
	}
	if b.DatasetSplit != nil {
		cfg.DatasetSplit = *b.DatasetSplit
		if cfg.DatasetSplit == "" {
			d.errorf(cty.GetAttrPath("dataset_split"), "Empty dataset_split", `Name the split of a Hugging Face dataset snapshot to read, like dataset_split = "train".`)
		}
	}
	d.decodeFormat(b, &cfg, pending["format"] || pending["template"])
	d.decodeTokenizer(b.Tokenizer, &cfg.Tokenizer)
	if b.OutputDir != nil {
		cfg.OutputDir = *b.OutputDir
		if cfg.OutputDir == "" {
			d.errorf(cty.GetAttrPath("output_dir"), "Empty output_dir", "Name the folder the shards are written to.")
		}
	}
	d.decodeOutputFormats(b.OutputFormat, &cfg)
	d.decodeSplit(b.Split, &cfg)
	d.decodeRun(b, &cfg)
	return cfg, d.diags
}

// pendingAttrs names the attributes that hold a value not known yet.
func pendingAttrs(unknown sdk.Unknowns) map[string]bool {
	out := map[string]bool{}
	for _, p := range unknown {
		if step, ok := firstStep(p); ok {
			out[step.Name] = true
		}
	}
	return out
}

// decodeRun reads how the stage runs: seed, shuffle, errors, threads and
// shard size.
func (d *decoder) decodeRun(b body, cfg *config) {
	if n, ok := d.wholeNumber("seed", b.Seed, 0, math.MaxInt64); ok {
		cfg.Seed = uint64(n)
	}
	cfg.Shuffle = b.Shuffle
	switch b.OnError {
	case "", "fail":
	case "skip":
		cfg.SkipErrors = true
	default:
		d.errorf(cty.GetAttrPath("on_error"), "Unsupported on_error", `on_error is "fail" (stop at the first bad record) or "skip" (skip bad records and count them), not %q.`, b.OnError)
	}
	if n, ok := d.wholeNumber("workers", b.Workers, 0, 4096); ok {
		cfg.Workers = int(n)
	}
	if n, ok := d.wholeNumber("shard_tokens", b.ShardTokens, 1, math.MaxInt64); ok {
		cfg.ShardTokens = n
	}
}

// decodeFormat reads the record format; pending says format or template is
// not known yet, so whether they fit each other is not checked.
func (d *decoder) decodeFormat(b body, cfg *config, pending bool) {
	if b.Format != nil {
		switch f := input.Format(*b.Format); f {
		case input.FormatJSONL, input.FormatTemplate, input.FormatText, input.FormatParquet, input.FormatChat:
			cfg.Format = f
		default:
			d.errorf(cty.GetAttrPath("format"), "Unsupported format", `format is "jsonl" (a text field per JSON line), "parquet" (a text column per row), "template" (each JSON line rendered through template), "chat" (a conversation per JSON line or Parquet row, rendered by the model's chat template) or "text" (each file one document), not %q.`, f)
			return
		}
	}
	d.decodeChat(b, cfg, pending)
	if b.TextField != nil {
		cfg.TextField = *b.TextField
		if cfg.TextField == "" {
			d.errorf(cty.GetAttrPath("text_field"), "Empty text_field", "Name the JSON field (or Parquet column) that holds each record's text.")
		}
	}
	if b.Template != nil {
		cfg.Template = *b.Template
		if _, err := input.NewTemplateDecoder(cfg.Template); err != nil {
			d.errorf(cty.GetAttrPath("template"), "Invalid template", "The template does not parse: %v.", err)
		}
	}
	if pending {
		return
	}
	switch {
	case cfg.Format == input.FormatTemplate && b.Template == nil:
		d.errorf(cty.GetAttrPath("format"), "Missing template", `format = "template" renders each record through template; set template, e.g. template = "{{.prompt}} {{.answer}}".`)
	case cfg.Format != input.FormatTemplate && b.Template != nil:
		d.errorf(cty.GetAttrPath("template"), "Template unused", `template applies only with format = "template"; the format here is %q.`, cfg.Format)
	}
}

// decodeChat reads the arguments of format "chat", which no other format
// takes.
func (d *decoder) decodeChat(b body, cfg *config, pending bool) {
	if b.TrainOn != nil {
		switch t := *b.TrainOn; t {
		case chat.TrainAssistant, chat.TrainLastAssistant, chat.TrainAll:
			cfg.TrainOn = t
		default:
			d.errorf(cty.GetAttrPath("train_on"), "Unsupported train_on", `train_on is "assistant" (every assistant message), "last_assistant" (the last one) or "all" (every token), not %q.`, t)
		}
	}
	if b.ChatTemplate != nil {
		cfg.ChatTemplate = *b.ChatTemplate
		if cfg.ChatTemplate == "" {
			d.errorf(cty.GetAttrPath("chat_template"), "Empty chat_template", "Name a tokenizer_config.json or a chat_template.jinja, or leave chat_template out to use the one beside the tokenizer.")
		}
	}
	if pending || cfg.Format == input.FormatChat {
		return
	}
	for _, a := range []struct {
		name string
		set  bool
	}{{"train_on", b.TrainOn != nil}, {"chat_template", b.ChatTemplate != nil}} {
		if a.set {
			d.errorf(cty.GetAttrPath(a.name), "Argument unused", `%s applies only with format = "chat"; the format here is %q.`, a.name, cfg.Format)
		}
	}
}

func (d *decoder) decodeTokenizer(b *tokenizerBody, t *tokenizerConfig) {
	if b == nil {
		return
	}
	path := cty.GetAttrPath("tokenizer")
	switch k := bpe.Kind(b.Type); k {
	case "":
	case bpe.KindTiktoken, bpe.KindHF:
		t.Type = k
	default:
		d.errorf(path.GetAttr("type"), "Unsupported tokenizer type", `type is "tiktoken" (a rank file: base64 token and rank per line) or "hf" (a Hugging Face tokenizer.json), not %q.`, k)
	}
	t.Path = b.Path
	if b.Encoding != nil {
		t.Encoding = *b.Encoding
		if t.Type == bpe.KindHF {
			d.errorf(path.GetAttr("encoding"), "Encoding unused", "A tokenizer.json names its own pre-tokenizer and special tokens; remove encoding.")
		}
	}
	t.BOS, t.EOS, t.ParseSpecial = b.BOS, b.EOS, b.ParseSpecial
}

func (d *decoder) decodeOutputFormats(formats []string, cfg *config) {
	if formats == nil {
		return
	}
	path := cty.GetAttrPath("output_format")
	if len(formats) == 0 {
		d.errorf(path, "No output format", `Give "megatron" and/or "npy", like output_format = ["megatron"].`)
		return
	}
	for k, f := range formats {
		if f != pipeline.FormatMegatron && f != pipeline.FormatNpy {
			d.errorf(path.IndexInt(k), "Unsupported output format", `An output format is "megatron" (indexed .bin/.idx) or "npy" (uint16/uint32 arrays), not %q.`, f)
		}
	}
	cfg.OutputFormats = formats
}

func (d *decoder) decodeSplit(b *splitBody, cfg *config) {
	if b == nil {
		return
	}
	path := cty.GetAttrPath("split")
	splits := make(map[string]float64)
	sum := 0.0
	for _, s := range []struct {
		name string
		f    *float64
	}{{"train", b.Train}, {"valid", b.Valid}, {"test", b.Test}} {
		if s.f == nil {
			continue
		}
		if *s.f < 0 || *s.f > 1 {
			d.errorf(path.GetAttr(s.name), "Split fraction out of range", "A split fraction is between 0 and 1; %s is %v.", s.name, *s.f)
			return
		}
		splits[s.name] = *s.f
		sum += *s.f
	}
	if math.Abs(sum-1) > 1e-9 {
		d.errorf(path, "Split fractions do not add up to 1", "The fractions add up to %v; make them add up to 1, like train = 0.99, valid = 0.01.", sum)
		return
	}
	cfg.Split = splits
}

// wholeNumber checks an optional integer attribute against [lo, hi].
func (d *decoder) wholeNumber(name string, bf *big.Float, lo, hi int64) (int64, bool) {
	if bf == nil {
		return 0, false
	}
	n, acc := bf.Int64()
	if !bf.IsInt() || acc != big.Exact || n < lo || n > hi {
		d.errorf(cty.GetAttrPath(name), "Invalid "+name, "%s is a whole number from %d to %d, not %s.", name, lo, hi, bf.Text('g', 10))
		return 0, false
	}
	return n, true
}

// resolve joins a path relative to the workload's folder to that folder;
// at apply the folder is absolute, and so is the result.
func resolve(workDir, path string) string {
	if filepath.IsAbs(path) || workDir == "" {
		return path
	}
	return filepath.Join(workDir, path)
}

// describeSplit renders splits as "train 0.99, valid 0.01".
func describeSplit(splits map[string]float64) string {
	var parts []string
	for _, name := range []string{"train", "valid", "test"} {
		if f, ok := splits[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %v", name, f))
		}
	}
	return strings.Join(parts, ", ")
}

func firstStep(p cty.Path) (cty.GetAttrStep, bool) {
	if len(p) == 0 {
		return cty.GetAttrStep{}, false
	}
	step, ok := p[0].(cty.GetAttrStep)
	return step, ok
}
