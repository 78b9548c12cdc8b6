package dataprep

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/api/digest"
	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
	"github.com/gpuflow/gpuflow/plugins/dataprep/chat"
	"github.com/gpuflow/gpuflow/plugins/dataprep/input"
	"github.com/gpuflow/gpuflow/plugins/dataprep/pipeline"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// apply runs one stage: resolve inputs, load the tokenizer, run the
// pipeline, and turn its result into outputs and events.
func apply(ctx context.Context, req *api.ApplyRequest, cfg config, sink api.EventSink) (map[string]cty.Value, api.Diagnostics) {
	pcfg, diags := pipelineConfig(req, cfg)
	if diags.HasErrors() {
		return nil, diags
	}
	logf(sink, "info", "%d input files; tokenizer %s (%d ids, %s); writing %v to %s",
		len(pcfg.Files), cfg.Tokenizer.Path, pcfg.Tokenizer.VocabSize(), pcfg.Tokenizer.Describe(), pcfg.Formats, pcfg.OutputDir)
	pcfg.Progress = func(p pipeline.Progress) {
		sink.Send(api.Event{Time: time.Now(), Progress: &api.Progress{
			Label: "tokenize", Done: float64(p.InputBytes), Total: float64(p.InputTotal), Unit: "bytes",
		}})
	}
	start := time.Now()
	res, err := pipeline.Run(ctx, pcfg)
	if err != nil {
		return nil, runDiagnostics(ctx, err)
	}
	took := time.Since(start).Seconds()
	report(sink, res, took, pcfg.OutputDir)
	return outputs(res, pcfg.OutputDir, cfg.OutputFormats), emptySplits(res, cfg.Split)
}

// emptySplits warns of a split that was given a share but no document,
// which a stage reading it would fail on.
func emptySplits(res *pipeline.Result, splits map[string]float64) api.Diagnostics {
	var diags api.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(splits)) {
		if splits[name] > 0 && res.Splits[name].Documents == 0 {
			diags = append(diags, api.Diagnostic{Severity: api.Warning, Summary: "Empty split",
				Path: cty.GetAttrPath("split").GetAttr(name),
				Detail: fmt.Sprintf("Split %q received none of the %d documents. Give it a larger share, or more (smaller) documents.",
					name, res.Documents)})
		}
	}
	return diags
}

// pipelineConfig resolves paths and loads what the pipeline needs,
// reporting problems against the attribute at fault.
func pipelineConfig(req *api.ApplyRequest, cfg config) (pipeline.Config, api.Diagnostics) {
	var diags api.Diagnostics
	fail := func(path cty.Path, summary, detail string) {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: summary, Detail: detail, Path: path})
	}
	workDir, err := api.AbsPath(req.WorkDir, ".")
	if err != nil {
		fail(nil, "Cannot find the workload's folder", err.Error()+".")
		return pipeline.Config{}, diags
	}
	files, err := input.Expand(workDir, cfg.Inputs, cfg.DatasetSplit)
	if err != nil {
		fail(cty.GetAttrPath("inputs"), "Input not found", err.Error()+". Paths are relative to the workload's folder.")
	}
	dec, err := newDecoder(cfg)
	if err != nil {
		fail(cty.GetAttrPath("template"), "Invalid template", err.Error())
	}
	tokPath := resolve(workDir, cfg.Tokenizer.Path)
	tok, err := bpe.Open(tokPath, cfg.Tokenizer.Type, cfg.Tokenizer.Encoding)
	if err != nil {
		fail(cty.GetAttrPath("tokenizer").GetAttr("path"), "Cannot load the tokenizer", err.Error())
		return pipeline.Config{}, diags
	}
	tokID, err := digest.File(tokPath)
	if err != nil {
		fail(cty.GetAttrPath("tokenizer").GetAttr("path"), "Cannot read the tokenizer", err.Error())
	}
	bos, eos := tok.DefaultBOS(), tok.DefaultEOS()
	for name, set := range map[string]*string{"bos": cfg.Tokenizer.BOS, "eos": cfg.Tokenizer.EOS} {
		if set == nil {
			continue
		}
		if _, ok := tok.SpecialID(*set); *set != "" && !ok {
			fail(cty.GetAttrPath("tokenizer").GetAttr(name), "Unknown special token",
				fmt.Sprintf("%q is not a special token of %s.", *set, cfg.Tokenizer.Path))
		}
		if name == "bos" {
			bos = *set
		} else {
			eos = *set
		}
	}
	parseSpecial := cfg.Format == input.FormatTemplate
	if cfg.Tokenizer.ParseSpecial != nil {
		parseSpecial = *cfg.Tokenizer.ParseSpecial
	}
	var chatCfg *pipeline.Chat
	if cfg.Format == input.FormatChat {
		if cfg.Tokenizer.BOS == nil {
			bos = "" // the chat template writes the BOS where the model wants it
		}
		var d api.Diagnostics
		chatCfg, d = chatConfig(workDir, cfg, tok)
		diags = append(diags, d...)
	}
	return pipeline.Config{
		Files:        files,
		Decoder:      dec,
		Tokenizer:    tok,
		TokenizerID:  tokID,
		Chat:         chatCfg,
		ParseSpecial: parseSpecial,
		BOS:          bos,
		EOS:          eos,
		OutputDir:    resolve(workDir, cfg.OutputDir),
		Formats:      cfg.OutputFormats,
		Splits:       cfg.Split,
		Seed:         cfg.Seed,
		Shuffle:      cfg.Shuffle,
		SkipErrors:   cfg.SkipErrors,
		Workers:      cfg.Workers,
		ShardTokens:  cfg.ShardTokens,
	}, diags
}

func newDecoder(cfg config) (*input.Decoder, error) {
	switch cfg.Format {
	case input.FormatTemplate:
		return input.NewTemplateDecoder(cfg.Template)
	case input.FormatText:
		return input.NewTextDecoder(), nil
	case input.FormatParquet:
		return input.NewParquetDecoder(cfg.TextField)
	case input.FormatChat:
		return input.NewChatDecoder(), nil
	}
	return input.NewJSONLDecoder(cfg.TextField)
}

// chatConfig loads the chat template: the file chat_template names, else
// chat_template.jinja beside the tokenizer, else the tokenizer_config.json
// beside it.
func chatConfig(workDir string, cfg config, tok *bpe.Tokenizer) (*pipeline.Chat, api.Diagnostics) {
	path, attr := chatTemplatePath(workDir, cfg)
	fail := func(summary, detail string) (*pipeline.Chat, api.Diagnostics) {
		return nil, api.Diagnostics{{Severity: api.Error, Summary: summary, Detail: detail, Path: attr}}
	}
	tmpl, err := chat.Load(path, tok.DefaultBOS(), tok.DefaultEOS())
	if err != nil {
		return fail("Cannot load the chat template", err.Error()+`. Name the model's tokenizer_config.json (with its "chat_template") or chat_template.jinja in chat_template.`)
	}
	id, err := digest.File(path)
	if err != nil {
		return fail("Cannot read the chat template", err.Error())
	}
	return &pipeline.Chat{Template: tmpl, TrainOn: cfg.TrainOn, TemplateID: id}, nil
}

// chatTemplatePath is the chat template's file and the attribute a problem
// with it is reported at.
func chatTemplatePath(workDir string, cfg config) (string, cty.Path) {
	if cfg.ChatTemplate != "" {
		return resolve(workDir, cfg.ChatTemplate), cty.GetAttrPath("chat_template")
	}
	dir := filepath.Dir(resolve(workDir, cfg.Tokenizer.Path))
	path := filepath.Join(dir, "chat_template.jinja")
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(dir, "tokenizer_config.json")
	}
	return path, cty.GetAttrPath("tokenizer").GetAttr("path")
}

// runDiagnostics explains why a run ended early.
func runDiagnostics(ctx context.Context, err error) api.Diagnostics {
	var recErr *input.RecordError
	switch {
	case errors.As(err, &recErr):
		return api.Diagnostics{{Severity: api.Error, Summary: "Bad input record", Path: cty.GetAttrPath("inputs"),
			Detail: recErr.Error() + `. Fix the record, or set on_error = "skip" to skip such records and count them.`}}
	case errors.Is(context.Cause(ctx), sdk.ErrStopped):
		return api.Diagnostics{{Severity: api.Error, Summary: "Data preparation stopped",
			Detail: "The stage was stopped; the shard groups it finished are kept in the manifest and the next apply resumes after them."}}
	}
	return api.Diagnostics{{Severity: api.Error, Summary: "Data preparation failed", Detail: err.Error() + "."}}
}

func report(sink api.EventSink, res *pipeline.Result, seconds float64, dir string) {
	now := time.Now()
	resumed := ""
	if res.Resumed > 0 {
		resumed = fmt.Sprintf(" (%d of %d shard groups were already done)", res.Resumed, res.Groups)
	}
	trained := ""
	if res.TrainedTokens > 0 {
		trained = fmt.Sprintf(" (%d of them trained)", res.TrainedTokens)
	}
	logf(sink, "info", "%d documents, %d tokens%s, %d bytes written, %d records skipped%s",
		res.Documents, res.Tokens, trained, res.Bytes, res.Skipped, resumed)
	for _, m := range []api.Metric{
		{Name: "documents", Value: float64(res.Documents)},
		{Name: "tokens", Value: float64(res.Tokens)},
		{Name: "skipped", Value: float64(res.Skipped)},
		{Name: "duration", Value: seconds, Unit: "s"},
	} {
		sink.Send(api.Event{Time: now, Metric: &m})
	}
	manifest := filepath.Join(dir, pipeline.ManifestName)
	if st, err := os.Stat(manifest); err == nil {
		sink.Send(api.Event{Time: now, Artifact: &api.Artifact{Name: "manifest", Path: manifest, Bytes: st.Size()}})
	}
}

func logf(sink api.EventSink, level, format string, args ...any) {
	sink.Send(api.Event{Time: time.Now(), Log: &api.Log{Level: level, Message: fmt.Sprintf(format, args...)}})
}

// outputs are the stage's outputs: per split the shard paths (Megatron
// prefixes where megatron is written, else .npy files) and counts; the
// totals; and where the manifest is.
func outputs(res *pipeline.Result, dir string, formats []string) map[string]cty.Value {
	out := map[string]cty.Value{
		"documents":  cty.NumberIntVal(res.Documents),
		"tokens":     cty.NumberIntVal(res.Tokens),
		"bytes":      cty.NumberIntVal(res.Bytes),
		"skipped":    cty.NumberIntVal(res.Skipped),
		"output_dir": cty.StringVal(dir),
		"manifest":   cty.StringVal(filepath.Join(dir, pipeline.ManifestName)),
	}
	for name, s := range res.Splits {
		paths := s.Npy
		if slices.Contains(formats, pipeline.FormatMegatron) {
			paths = s.Megatron
		}
		out[name] = cty.ObjectVal(map[string]cty.Value{
			"paths":          stringsVal(paths),
			"megatron":       stringsVal(s.Megatron),
			"npy":            stringsVal(s.Npy),
			"masks":          stringsVal(s.Masks),
			"documents":      cty.NumberIntVal(s.Documents),
			"tokens":         cty.NumberIntVal(s.Tokens),
			"trained_tokens": cty.NumberIntVal(s.TrainedTokens),
			"bytes":          cty.NumberIntVal(s.Bytes),
		})
	}
	return out
}

func stringsVal(ss []string) cty.Value {
	if len(ss) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	vals := make([]cty.Value, len(ss))
	for k, s := range ss {
		vals[k] = cty.StringVal(s)
	}
	return cty.ListVal(vals)
}
