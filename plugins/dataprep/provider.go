package dataprep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
	"github.com/gpuflow/gpuflow/plugins/dataprep/chat"
	"github.com/gpuflow/gpuflow/plugins/dataprep/input"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// Provider serves the data_prep stage type. It runs any number of stages
// at once, each on its own pool of workers.
type Provider struct {
	stopper sdk.Stopper
}

var _ api.Provider = (*Provider)(nil)

// New returns a data_prep provider.
func New() *Provider { return &Provider{} }

// Schema implements api.Provider.
func (p *Provider) Schema(context.Context) (*api.Schema, error) {
	return &api.Schema{
		Name:         Name,
		Version:      Version,
		Capabilities: []string{api.CapabilityStop, api.CapabilityConcurrentApply},
		StageTypes:   map[string]*api.BlockSchema{StageType: stageSchema},
	}, nil
}

// ValidateStage implements api.Provider. It loads the tokenizer where its
// file exists already, so that one gpuflow cannot read is refused at its
// line before anything runs.
func (p *Provider) ValidateStage(_ context.Context, req *api.StageRequest) (api.Diagnostics, error) {
	cfg, diags := decodeConfig(req.Config)
	if diags.HasErrors() || !req.Config.IsKnown() || req.Config.IsNull() {
		return diags, nil
	}
	diags = append(diags, checkTokenizer(req, cfg)...)
	return append(diags, checkChatTemplate(req, cfg)...), nil
}

// checkChatTemplate compiles the chat template of format "chat" where its
// file exists already.
func checkChatTemplate(req *api.StageRequest, cfg config) api.Diagnostics {
	if cfg.Format != input.FormatChat || cfg.Pending["tokenizer"] || cfg.Pending["chat_template"] {
		return nil
	}
	path, attr := chatTemplatePath(req.WorkDir, cfg)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	if _, err := chat.Load(path, "", ""); err != nil {
		return api.Diagnostics{{Severity: api.Error, Summary: "Cannot load the chat template", Path: attr,
			Detail: err.Error() + `. Name the model's tokenizer_config.json (with its "chat_template") or chat_template.jinja in chat_template.`}}
	}
	return nil
}

// checkTokenizer loads the tokenizer a known path names. A file that does
// not exist yet may be written by an earlier stage; apply reports it then.
func checkTokenizer(req *api.StageRequest, cfg config) api.Diagnostics {
	if cfg.Pending["tokenizer"] || cfg.Tokenizer.Path == "" {
		return nil
	}
	path := resolve(req.WorkDir, cfg.Tokenizer.Path)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	if _, err := bpe.Open(path, cfg.Tokenizer.Type, cfg.Tokenizer.Encoding); err != nil {
		return api.Diagnostics{{Severity: api.Error, Summary: "Cannot load the tokenizer", Path: cty.GetAttrPath("tokenizer").GetAttr("path"),
			Detail: err.Error() + ". Use a tokenizer.json of a byte-level or SentencePiece-style BPE model, or a tiktoken rank file (docs/language.md lists what is read)."}}
	}
	return nil
}

// PlanStage implements api.Provider: the details say what will be read,
// with what tokenizer, and where the shards go.
func (p *Provider) PlanStage(_ context.Context, req *api.StageRequest) (*api.PlanResponse, error) {
	cfg, diags := decodeConfig(req.Config)
	plan := &api.PlanResponse{Diagnostics: diags}
	if req.Config.IsNull() || !req.Config.IsKnown() || diags.HasErrors() {
		return plan, nil
	}
	plan.Details = []api.Detail{
		{Key: "inputs", Value: describeInputs(req, cfg)},
		{Key: "format", Value: describeFormat(cfg)},
		{Key: "tokenizer", Value: knownOr(cfg, "tokenizer", func() string {
			return fmt.Sprintf("%s %s", cfg.Tokenizer.Type, cfg.Tokenizer.Path)
		})},
		{Key: "output", Value: knownOr(cfg, "output_dir", func() string {
			return fmt.Sprintf("%s (%s)", resolve(req.WorkDir, cfg.OutputDir), strings.Join(cfg.OutputFormats, ", "))
		})},
		{Key: "split", Value: fmt.Sprintf("%s, seed %d, shuffle %v", describeSplit(cfg.Split), cfg.Seed, cfg.Shuffle)},
	}
	return plan, nil
}

// knownOr renders an attribute's value, or says it is not known yet.
func knownOr(cfg config, attr string, render func() string) string {
	if cfg.Pending[attr] {
		return "(known after apply)"
	}
	return render()
}

// describeInputs counts the input files and bytes where they exist already;
// an upstream stage may still have to write them.
func describeInputs(req *api.StageRequest, cfg config) string {
	if cfg.Pending["inputs"] {
		return "(known after apply)"
	}
	files, err := input.Expand(req.WorkDir, cfg.Inputs, cfg.DatasetSplit)
	if err != nil {
		return strings.Join(cfg.Inputs, ", ") + " (not all found yet)"
	}
	var size int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			size += st.Size()
		}
	}
	return fmt.Sprintf("%d files, %.1f MB", len(files), float64(size)/1e6)
}

func describeFormat(cfg config) string {
	switch cfg.Format {
	case input.FormatJSONL:
		return fmt.Sprintf("jsonl, text in field %q", cfg.TextField)
	case input.FormatTemplate:
		return "jsonl rendered through template"
	case input.FormatParquet:
		return fmt.Sprintf("parquet, text in column %q", cfg.TextField)
	case input.FormatChat:
		return fmt.Sprintf("chat records rendered by the model's chat template, loss on %s", describeTrainOn(cfg.TrainOn))
	}
	return "plain text, one document per file"
}

func describeTrainOn(trainOn string) string {
	switch trainOn {
	case chat.TrainAll:
		return "every token"
	case chat.TrainLastAssistant:
		return "the last assistant message"
	}
	return "assistant messages"
}

// ApplyStage implements api.Provider.
func (p *Provider) ApplyStage(ctx context.Context, req *api.ApplyRequest, sink api.EventSink) (*api.ApplyResponse, error) {
	if !req.Config.IsWhollyKnown() {
		return nil, errors.New("data_prep: the host sent a configuration with unknown values to apply")
	}
	cfg, diags := decodeConfig(req.Config)
	if diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}, nil
	}
	ctx, release := p.stopper.Track(ctx)
	defer release()
	outputs, runDiags := apply(ctx, req, cfg, sink)
	return &api.ApplyResponse{Outputs: outputs, Diagnostics: append(diags, runDiags...)}, nil
}

// Stop implements api.Provider: running stages stop after their current
// batch; finished shard groups stay recorded for the next apply.
func (p *Provider) Stop(context.Context) error {
	p.stopper.Stop()
	return nil
}
