package train

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

// evalConfig is what trainer/evaluate.py reads from config.json; the
// files it names are in the run's folder, all paths absolute.
type evalConfig struct {
	Stage         string          `json:"stage"`
	Model         modelConfig     `json:"model"`
	Layout        api.Layout      `json:"layout"`
	Device        string          `json:"device"`
	Seed          int64           `json:"seed"`
	Weights       string          `json:"weights"`
	WeightsFormat string          `json:"weights_format"`
	Base          string          `json:"base,omitempty"`
	BaseFormat    string          `json:"base_format,omitempty"`
	Data          []string        `json:"data,omitempty"`
	MaxTokens     int64           `json:"max_tokens,omitempty"`
	Choices       *choicesFiles   `json:"choices,omitempty"`
	Generate      *generateConfig `json:"generate,omitempty"`
}

// choicesFiles: the questions as tokens in, each choice's log-likelihood out.
type choicesFiles struct {
	Questions string `json:"questions"`
	Scores    string `json:"scores"`
}

// generateConfig: the prompts as tokens in, the completions' tokens out.
type generateConfig struct {
	Prompts      string   `json:"prompts"`
	Completions  string   `json:"completions"`
	MaxNewTokens int      `json:"max_new_tokens"`
	Temperature  float64  `json:"temperature"`
	TopP         float64  `json:"top_p"`
	Stop         []uint32 `json:"stop"`
}

// evalRun is an eval stage made ready to launch, with what gpuflow does
// itself before and after: tokenizing, scoring and decoding, and the
// thresholds.
type evalRun struct {
	launch    *Launch
	cfg       evalConfig
	tokenizer tokenizerSpec
	// questionsPath and promptsPath are the user's JSONL files.
	questionsPath, promptsPath string
	questions                  []question
	prompts                    []promptRecord
	// completionsPath is the completions as text, in the run's folder.
	completionsPath string
	// decoder turns completions back into text.
	decoder *bpe.Tokenizer
	expect  map[string]float64
}

// tokenizerSpec is the tokenizer block, or the model folder's tokenizer.json.
type tokenizerSpec struct {
	kind     bpe.Kind
	path     string
	encoding string
}

// Entry point and files of an evaluation in its run folder.
const (
	evalScript      = "evaluate.py"
	questionsFile   = "questions.tokens.jsonl"
	scoresFile      = "questions.scores.jsonl"
	promptsFile     = "prompts.tokens.jsonl"
	completionIDs   = "completions.tokens.jsonl"
	completionsFile = "completions.jsonl"
	defaultNewToks  = 64
)

// prepareEval decodes the stage, tokenizes its questions and prompts, and
// writes the evaluator and its config.json into the run's folder.
func prepareEval(req *api.ApplyRequest, opts Options) (*evalRun, api.Diagnostics) {
	runDir, err := filepath.Abs(req.RunDir)
	if err != nil {
		return nil, api.Diagnostics{ioDiagnostic("Cannot find the run folder", err)}
	}
	run, hw, diags := decodeEval(req, runDir)
	if diags.HasErrors() {
		return nil, diags
	}
	_, procs, d := evalProcesses(run.cfg.Layout, hw, run.cfg.Device)
	if diags = append(diags, d...); diags.HasErrors() {
		return nil, diags
	}
	if diags = append(diags, run.tokenize(runDir)...); diags.HasErrors() {
		return nil, diags
	}
	script, err := writeTrainer(filepath.Join(runDir, "trainer"))
	if err != nil {
		return nil, append(diags, ioDiagnostic("Cannot write the evaluator", err))
	}
	configPath := filepath.Join(runDir, "config.json")
	if err := writeJSON(configPath, run.cfg); err != nil {
		return nil, append(diags, ioDiagnostic("Cannot write the evaluator's config", err))
	}
	run.launch = &Launch{
		Torchrun: Torchrun{Python: python(opts), Script: filepath.Join(filepath.Dir(script), evalScript), Config: configPath, Nodes: 1, ProcsPerNode: procs},
		Env:      trainerEnv(req.Env, hw),
		RunDir:   runDir,
		Config:   runConfig{Stage: run.cfg.Stage, Type: evalType, Model: run.cfg.Model, Layout: run.cfg.Layout, Device: run.cfg.Device},
	}
	return run, diags
}

// evalProcesses: the dp ranks each hold the whole model, or with fsdp =
// true (or zero = 3) a share of its weights, and split the work; tensor,
// pipeline and context parallelism are not theirs, nor a second node.
func evalProcesses(l api.Layout, hw hardwareConfig, device string) (nodes, procs int, diags api.Diagnostics) {
	if l.TP > 1 || l.PP > 1 || l.CP > 1 {
		return 0, 0, api.Diagnostics{{Severity: api.Error, Summary: "Evaluation splits no layer", Path: cty.GetAttrPath("layout"),
			Detail: fmt.Sprintf("An eval stage splits the work between its dp ranks, each holding the whole model or, with fsdp = true (or zero = 3), a share of its weights; this layout has tp = %d, pp = %d, cp = %d. Set tp, pp and cp to 1, and fsdp = true where the model does not fit on one GPU.", l.TP, l.PP, l.CP)}}
	}
	nodes, procs, diags = processes(l, hw, device)
	if nodes > 1 {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Evaluation runs on one node", Path: cty.GetAttrPath("layout"),
			Detail: fmt.Sprintf("The layout runs %d ranks on %d nodes; an eval stage runs on one. Set dp to at most %d.", l.WorldSize(), nodes, procs)})
	}
	return nodes, procs, diags
}

// evalArgs is an eval stage body: its arguments and blocks, and the
// model, layout and hardware meta-arguments.
type evalArgs struct {
	Model          modelConfig    `cty:"model"`
	Layout         api.Layout     `cty:"layout"`
	Hardware       hardwareConfig `cty:"hardware"`
	Weights        string         `cty:"weights"`
	Base           string         `cty:"base"`
	Data           cty.Value      `cty:"data"`
	Tokens         *float64       `cty:"tokens"`
	Seed           float64        `cty:"seed"`
	Device         string         `cty:"device"`
	Tokenizer      *tokenizerArgs `cty:"tokenizer"`
	MultipleChoice *choicesArgs   `cty:"multiple_choice"`
	Generate       *generateArgs  `cty:"generate"`
	Expect         expectArgs     `cty:"expect"`
	Unknown        sdk.Unknowns
}

type tokenizerArgs struct {
	Type     string `cty:"type"`
	Path     string `cty:"path"`
	Encoding string `cty:"encoding"`
}

type choicesArgs struct {
	Path string `cty:"path"`
}

type generateArgs struct {
	Prompts      string  `cty:"prompts"`
	MaxNewTokens int     `cty:"max_new_tokens"`
	Temperature  float64 `cty:"temperature"`
	TopP         float64 `cty:"top_p"`
}

// expectArgs are the thresholds; nil where the block leaves one out.
type expectArgs struct {
	MaxValidLoss    *float64 `cty:"max_valid_loss"`
	MaxPerplexity   *float64 `cty:"max_perplexity"`
	MinAccuracy     *float64 `cty:"min_accuracy"`
	MinAccuracyNorm *float64 `cty:"min_accuracy_norm"`
}

// thresholds are the thresholds set, by attribute name as expectations
// lists them.
func (e expectArgs) thresholds() map[string]float64 {
	out := map[string]float64{}
	for attr, v := range map[string]*float64{"max_valid_loss": e.MaxValidLoss, "max_perplexity": e.MaxPerplexity,
		"min_accuracy": e.MinAccuracy, "min_accuracy_norm": e.MinAccuracyNorm} {
		if v != nil {
			out[attr] = *v
		}
	}
	return out
}

// decodeEvalArgs reads an eval stage body over the defaults of what it
// leaves out, as docs/training.md lists them.
func decodeEvalArgs(c cty.Value) (evalArgs, api.Diagnostics) {
	if diags := checkMeta(c); diags.HasErrors() {
		args, _ := readEvalArgs(cty.EmptyObjectVal)
		return args, diags
	}
	return readEvalArgs(c)
}

// readEvalArgs reads what the body holds over the defaults.
func readEvalArgs(c cty.Value) (evalArgs, api.Diagnostics) {
	d := defaultArgs()
	args := evalArgs{Model: d.Model, Layout: d.Layout, Hardware: d.Hardware, Data: d.Data, Seed: defaultSeed, Device: deviceCUDA,
		Generate: &generateArgs{MaxNewTokens: defaultNewToks, TopP: 1}}
	return args, sdk.Decode(c, &args)
}

// decodeEval reads the stage body.
func decodeEval(req *api.ApplyRequest, runDir string) (*evalRun, hardwareConfig, api.Diagnostics) {
	args, diags := decodeEvalArgs(req.Config)
	run := &evalRun{cfg: evalConfig{Stage: req.Type + "." + req.Name, Model: args.Model, Layout: args.Layout,
		Seed: int64(args.Seed), MaxTokens: int64(value(args.Tokens))}, expect: args.Expect.thresholds()}
	if diags.HasErrors() {
		return run, args.Hardware, diags
	}
	c := &run.cfg
	c.Device = args.Device
	diags = append(diags, checkDevice(c.Device)...)
	var d api.Diagnostics
	c.Model.HF, d = absPath(cty.GetAttrPath("model"), req.WorkDir, c.Model.HF)
	diags = append(diags, d...)
	c.Base, c.BaseFormat, d = weights("base", args.Base, req.WorkDir, false)
	diags = append(diags, d...)
	if c.Base != "" {
		c.Weights, c.WeightsFormat, d = adapters(args.Weights, req.WorkDir)
	} else {
		c.Weights, c.WeightsFormat, d = weights("weights", args.Weights, req.WorkDir, true)
	}
	diags = append(diags, d...)
	for _, w := range []struct{ path, format string }{{c.Weights, c.WeightsFormat}, {c.Base, c.BaseFormat}} {
		if w.format == formatHF && c.Model.HF == "" {
			c.Model.HF = w.path // a preset's shape, the folder's rotary, norms and biases
		}
	}
	if !args.Data.IsNull() {
		var err error
		if c.Data, err = dataPrefixes(args.Data, req.WorkDir); err != nil {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Evaluation data not found", Path: cty.GetAttrPath("data"),
				Detail: fmt.Sprintf("The data argument cannot be read as Megatron shards: %s.", err)})
		}
	}
	diags = append(diags, texts(args, run, req.WorkDir, runDir)...)
	return run, args.Hardware, append(diags, checkSupported(c.Model, c.Layout, nil, c.Device)...)
}

// adapters reads weights as a LoRA fine-tune's adapters: its checkpoint
// folder (holding adapters.safetensors) or that file itself.
func adapters(weights, workDir string) (string, string, api.Diagnostics) {
	at := cty.GetAttrPath("weights")
	p, diags := absPath(at, workDir, weights)
	file := p
	if !strings.HasSuffix(p, ".safetensors") {
		file = filepath.Join(p, adaptersFile)
	}
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "No adapters", Path: at,
			Detail: fmt.Sprintf("With base set, weights are a LoRA fine-tune's adapters: its checkpoint (stage.finetune.NAME.outputs.checkpoint, which holds %s) or outputs.adapters; %s has none. A fine-tune writes it into its last checkpoint when it ends; for one stopped before its end, apply it again to finish it.", adaptersFile, p)})
	}
	return p, formatCheckpoint, diags
}

// adaptersFile is the trainer's one-file copy of a fine-tune's adapters,
// beside its last checkpoint.
const adaptersFile = "adapters.safetensors"

// texts reads the tokenizer, multiple_choice and generate blocks.
func texts(args evalArgs, run *evalRun, workDir, runDir string) api.Diagnostics {
	var diags, d api.Diagnostics
	if m := args.MultipleChoice; m != nil {
		run.questionsPath, d = absPath(cty.GetAttrPath("multiple_choice").GetAttr("path"), workDir, m.Path)
		diags = append(diags, d...)
		run.cfg.Choices = &choicesFiles{Questions: filepath.Join(runDir, questionsFile), Scores: filepath.Join(runDir, scoresFile)}
	}
	if g := args.Generate; g != nil {
		run.promptsPath, d = absPath(cty.GetAttrPath("generate").GetAttr("prompts"), workDir, g.Prompts)
		diags = append(diags, d...)
		run.completionsPath = filepath.Join(runDir, completionsFile)
		run.cfg.Generate = &generateConfig{Prompts: filepath.Join(runDir, promptsFile), Completions: filepath.Join(runDir, completionIDs),
			MaxNewTokens: g.MaxNewTokens, Temperature: g.Temperature, TopP: g.TopP, Stop: []uint32{}}
		if g.MaxNewTokens >= run.cfg.Model.SeqLen {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Completions longer than the model's context", Path: cty.GetAttrPath("generate").GetAttr("max_new_tokens"),
				Detail: fmt.Sprintf("max_new_tokens %d leaves no room for a prompt in the model's %d tokens; lower it.", g.MaxNewTokens, run.cfg.Model.SeqLen)})
		}
	}
	if run.questionsPath == "" && run.promptsPath == "" {
		return diags
	}
	run.tokenizer, d = tokenizer(args.Tokenizer, workDir, run.cfg.Model.HF)
	return append(diags, d...)
}

// tokenizer reads the tokenizer block, or finds the model folder's
// tokenizer.json.
func tokenizer(t *tokenizerArgs, workDir, modelFolder string) (tokenizerSpec, api.Diagnostics) {
	at := cty.GetAttrPath("tokenizer")
	if t != nil {
		spec := tokenizerSpec{kind: bpe.Kind(t.Type), encoding: t.Encoding}
		var diags api.Diagnostics
		spec.path, diags = absPath(at.GetAttr("path"), workDir, t.Path)
		if spec.kind != bpe.KindTiktoken && spec.kind != bpe.KindHF {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Unsupported tokenizer type", Path: at.GetAttr("type"),
				Detail: fmt.Sprintf(`type is "tiktoken" (a rank file) or "hf" (a Hugging Face tokenizer.json), not %q.`, spec.kind)})
		}
		return spec, diags
	}
	if modelFolder != "" {
		p := filepath.Join(modelFolder, "tokenizer.json")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return tokenizerSpec{kind: bpe.KindHF, path: p}, nil
		}
	}
	return tokenizerSpec{}, api.Diagnostics{{Severity: api.Error, Summary: "No tokenizer",
		Detail: "Questions and prompts are text, and the model has no folder with a tokenizer.json; add a tokenizer block naming the data prep's vocabulary, e.g. tokenizer { type = \"tiktoken\"  path = \"r50k_base.tiktoken\" }."}}
}

// applyEval runs one eval stage: prepare, check, launch, then score,
// decode and judge.
func applyEval(ctx context.Context, req *api.ApplyRequest, sink api.EventSink, opts Options) *api.ApplyResponse {
	run, diags := prepareEval(req, opts)
	if diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}
	}
	l := run.launch
	env := l.Environ(os.Environ())
	report, d := preflight(ctx, l, env)
	if diags = append(diags, d...); diags.HasErrors() {
		return &api.ApplyResponse{Diagnostics: diags}
	}
	mon := newMonitor(sink)
	mon.log("info", report.describe())
	mon.log("info", strings.Join(l.Torchrun.Argv(), " "))
	status, err := runLauncher(ctx, l.Torchrun.Argv(), env, l.RunDir, l.RunDir, mon, grace(opts))
	for _, name := range []string{"stdout.log", "stderr.log"} {
		sendArtifact(sink, name, filepath.Join(l.RunDir, name))
	}
	outputs, d := run.judge(ctx, status, err, mon, sink)
	return &api.ApplyResponse{Outputs: outputs, Diagnostics: append(diags, d...)}
}

// judge turns how the evaluator ended into outputs, and the thresholds
// into diagnostics.
func (r *evalRun) judge(ctx context.Context, status exitStatus, err error, mon *monitor, sink api.EventSink) (map[string]cty.Value, api.Diagnostics) {
	mon.mu.Lock()
	res, errs, tail := mon.eval, mon.errors, mon.stderrTail
	mon.mu.Unlock()
	switch {
	case err != nil:
		return nil, launchFailed(err)
	case res != nil && status.Code == 0:
		m, diags := r.measures(*res)
		if diags.HasErrors() {
			return nil, diags
		}
		if r.completionsPath != "" {
			sendArtifact(sink, "completions", r.completionsPath)
		}
		mon.log("info", m.describe())
		m.send(sink, r.expect)
		return m.outputs(r.completionsPath), r.check(m)
	case ctx.Err() != nil:
		return nil, api.Diagnostics{{Severity: api.Error, Summary: "Evaluation stopped", Detail: "The evaluation was stopped before it finished; the next apply runs it again."}}
	case len(errs) > 0:
		var diags api.Diagnostics
		for _, e := range errs {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: e.Summary, Detail: e.Detail})
		}
		return nil, diags
	}
	how := fmt.Sprintf("exited with status %d", status.Code)
	if status.Signal != "" {
		how = "was killed by " + status.Signal
	}
	detail := "torchrun " + how + " without reporting a result."
	if len(tail) > 0 {
		detail += " The last lines on stderr:\n  " + strings.Join(tail, "\n  ")
	}
	return nil, api.Diagnostics{{Severity: api.Error, Summary: "Evaluation failed", Detail: detail + "\nThe full output is in stdout.log and stderr.log in the run's folder."}}
}
