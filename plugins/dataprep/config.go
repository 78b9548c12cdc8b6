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

// decoder collects diagnostics while reading attributes of a body.
type decoder struct {
	diags api.Diagnostics
}

func (d *decoder) errorf(path cty.Path, summary, format string, args ...any) {
	d.diags = append(d.diags, api.Diagnostic{Severity: api.Error, Summary: summary, Detail: fmt.Sprintf(format, args...), Path: path})
}

// known reports whether v holds a value to decode: known and not null.
func known(v cty.Value) bool { return v.IsWhollyKnown() && !v.IsNull() }

func decodeConfig(v cty.Value) (config, api.Diagnostics) {
	cfg := defaultConfig()
	if v.IsNull() || !v.IsKnown() {
		return cfg, nil
	}
	d := &decoder{}
	if s := v.GetAttr("inputs"); known(s) {
		cfg.Inputs = stringList(s)
		if len(cfg.Inputs) == 0 {
			d.errorf(cty.GetAttrPath("inputs"), "No inputs", `Name at least one input file or glob, like inputs = ["data/*.jsonl"].`)
		}
	}
	if s := v.GetAttr("dataset_split"); known(s) {
		cfg.DatasetSplit = s.AsString()
		if cfg.DatasetSplit == "" {
			d.errorf(cty.GetAttrPath("dataset_split"), "Empty dataset_split", `Name the split of a Hugging Face dataset snapshot to read, like dataset_split = "train".`)
		}
	}
	d.decodeFormat(v, &cfg)
	d.decodeTokenizer(v.GetAttr("tokenizer"), &cfg.Tokenizer)
	if s := v.GetAttr("output_dir"); known(s) {
		cfg.OutputDir = s.AsString()
		if cfg.OutputDir == "" {
			d.errorf(cty.GetAttrPath("output_dir"), "Empty output_dir", "Name the folder the shards are written to.")
		}
	}
	d.decodeOutputFormats(v.GetAttr("output_format"), &cfg)
	d.decodeSplit(v.GetAttr("split"), &cfg)
	if n, ok := d.wholeNumber(v, "seed", 0, math.MaxInt64); ok {
		cfg.Seed = uint64(n)
	}
	if s := v.GetAttr("shuffle"); known(s) {
		cfg.Shuffle = s.True()
	}
	if s := v.GetAttr("on_error"); known(s) {
		switch s.AsString() {
		case "fail":
		case "skip":
			cfg.SkipErrors = true
		default:
			d.errorf(cty.GetAttrPath("on_error"), "Unsupported on_error", `on_error is "fail" (stop at the first bad record) or "skip" (skip bad records and count them), not %q.`, s.AsString())
		}
	}
	if n, ok := d.wholeNumber(v, "workers", 0, 4096); ok {
		cfg.Workers = int(n)
	}
	if n, ok := d.wholeNumber(v, "shard_tokens", 1, math.MaxInt64); ok {
		cfg.ShardTokens = n
	}
	return cfg, d.diags
}

func stringList(v cty.Value) []string {
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() {
			continue
		}
		out = append(out, e.AsString())
	}
	return out
}

func (d *decoder) decodeFormat(v cty.Value, cfg *config) {
	if s := v.GetAttr("format"); known(s) {
		switch f := input.Format(s.AsString()); f {
		case input.FormatJSONL, input.FormatTemplate, input.FormatText, input.FormatParquet, input.FormatChat:
			cfg.Format = f
		default:
			d.errorf(cty.GetAttrPath("format"), "Unsupported format", `format is "jsonl" (a text field per JSON line), "parquet" (a text column per row), "template" (each JSON line rendered through template), "chat" (a conversation per JSON line, rendered by the model's chat template) or "text" (each file one document), not %q.`, f)
			return
		}
	}
	d.decodeChat(v, cfg)
	if s := v.GetAttr("text_field"); known(s) {
		cfg.TextField = s.AsString()
		if cfg.TextField == "" {
			d.errorf(cty.GetAttrPath("text_field"), "Empty text_field", "Name the JSON field (or Parquet column) that holds each record's text.")
		}
	}
	tmpl := v.GetAttr("template")
	if known(tmpl) {
		cfg.Template = tmpl.AsString()
		if _, err := input.NewTemplateDecoder(cfg.Template); err != nil {
			d.errorf(cty.GetAttrPath("template"), "Invalid template", "The template does not parse: %v.", err)
		}
	}
	if !v.GetAttr("format").IsKnown() || !tmpl.IsKnown() {
		return
	}
	switch {
	case cfg.Format == input.FormatTemplate && tmpl.IsNull():
		d.errorf(cty.GetAttrPath("format"), "Missing template", `format = "template" renders each record through template; set template, e.g. template = "{{.prompt}} {{.answer}}".`)
	case cfg.Format != input.FormatTemplate && !tmpl.IsNull():
		d.errorf(cty.GetAttrPath("template"), "Template unused", `template applies only with format = "template"; the format here is %q.`, cfg.Format)
	}
}

// decodeChat reads the arguments of format "chat", which no other format
// takes.
func (d *decoder) decodeChat(v cty.Value, cfg *config) {
	if s := v.GetAttr("train_on"); known(s) {
		switch t := s.AsString(); t {
		case chat.TrainAssistant, chat.TrainLastAssistant, chat.TrainAll:
			cfg.TrainOn = t
		default:
			d.errorf(cty.GetAttrPath("train_on"), "Unsupported train_on", `train_on is "assistant" (every assistant message), "last_assistant" (the last one) or "all" (every token), not %q.`, t)
		}
	}
	if s := v.GetAttr("chat_template"); known(s) {
		cfg.ChatTemplate = s.AsString()
		if cfg.ChatTemplate == "" {
			d.errorf(cty.GetAttrPath("chat_template"), "Empty chat_template", "Name a tokenizer_config.json or a chat_template.jinja, or leave chat_template out to use the one beside the tokenizer.")
		}
	}
	if !v.GetAttr("format").IsKnown() || cfg.Format == input.FormatChat {
		return
	}
	for _, name := range []string{"train_on", "chat_template"} {
		if a := v.GetAttr(name); a.IsKnown() && !a.IsNull() {
			d.errorf(cty.GetAttrPath(name), "Argument unused", `%s applies only with format = "chat"; the format here is %q.`, name, cfg.Format)
		}
	}
}

func (d *decoder) decodeTokenizer(v cty.Value, t *tokenizerConfig) {
	if !known(v) {
		return
	}
	path := cty.GetAttrPath("tokenizer")
	if s := v.GetAttr("type"); known(s) {
		switch k := bpe.Kind(s.AsString()); k {
		case bpe.KindTiktoken, bpe.KindHF:
			t.Type = k
		default:
			d.errorf(path.GetAttr("type"), "Unsupported tokenizer type", `type is "tiktoken" (a rank file: base64 token and rank per line) or "hf" (a Hugging Face tokenizer.json), not %q.`, k)
		}
	}
	if s := v.GetAttr("path"); known(s) {
		t.Path = s.AsString()
	}
	if s := v.GetAttr("encoding"); known(s) {
		t.Encoding = s.AsString()
		if t.Type == bpe.KindHF {
			d.errorf(path.GetAttr("encoding"), "Encoding unused", "A tokenizer.json names its own pre-tokenizer and special tokens; remove encoding.")
		}
	}
	for name, dst := range map[string]**string{"bos": &t.BOS, "eos": &t.EOS} {
		if s := v.GetAttr(name); known(s) {
			text := s.AsString()
			*dst = &text
		}
	}
	if s := v.GetAttr("parse_special"); known(s) {
		b := s.True()
		t.ParseSpecial = &b
	}
}

func (d *decoder) decodeOutputFormats(v cty.Value, cfg *config) {
	if !known(v) {
		return
	}
	path := cty.GetAttrPath("output_format")
	formats := stringList(v)
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

func (d *decoder) decodeSplit(v cty.Value, cfg *config) {
	if !known(v) {
		return
	}
	path := cty.GetAttrPath("split")
	splits := make(map[string]float64)
	sum := 0.0
	for _, name := range []string{"train", "valid", "test"} {
		s := v.GetAttr(name)
		if !s.IsKnown() {
			return
		}
		if s.IsNull() {
			continue
		}
		f, _ := s.AsBigFloat().Float64()
		if f < 0 || f > 1 {
			d.errorf(path.GetAttr(name), "Split fraction out of range", "A split fraction is between 0 and 1; %s is %v.", name, f)
			return
		}
		splits[name] = f
		sum += f
	}
	if math.Abs(sum-1) > 1e-9 {
		d.errorf(path, "Split fractions do not add up to 1", "The fractions add up to %v; make them add up to 1, like train = 0.99, valid = 0.01.", sum)
		return
	}
	cfg.Split = splits
}

// wholeNumber reads an optional integer attribute within [lo, hi].
func (d *decoder) wholeNumber(v cty.Value, name string, lo, hi int64) (int64, bool) {
	s := v.GetAttr(name)
	if !known(s) {
		return 0, false
	}
	bf := s.AsBigFloat()
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
