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

// evalProcesses: every rank holds the whole model, so the layout may only
// replicate it (dp), on one node.
func evalProcesses(l api.Layout, hw hardwareConfig, device string) (nodes, procs int, diags api.Diagnostics) {
	if l.TP > 1 || l.PP > 1 || l.CP > 1 {
		return 0, 0, api.Diagnostics{{Severity: api.Error, Summary: "Evaluation splits no model", Path: cty.GetAttrPath("layout"),
			Detail: fmt.Sprintf("An eval stage holds the whole model on every rank and splits the work between ranks, so its layout sets dp alone; this one has tp = %d, pp = %d, cp = %d.", l.TP, l.PP, l.CP)}}
	}
	nodes, procs, diags = processes(l, hw, device)
	if nodes > 1 {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Evaluation runs on one node", Path: cty.GetAttrPath("layout"),
			Detail: fmt.Sprintf("The layout runs %d ranks on %d nodes; an eval stage runs on one. Set dp to at most %d.", l.WorldSize(), nodes, procs)})
	}
	return nodes, procs, diags
}

// decodeEval reads the stage body.
func decodeEval(req *api.ApplyRequest, runDir string) (*evalRun, hardwareConfig, api.Diagnostics) {
	d := &decoder{c: req.Config}
	run := &evalRun{cfg: evalConfig{Stage: req.Type + "." + req.Name, Model: d.model(), Layout: d.layout(),
		Seed: int64(d.number("seed", defaultSeed)), MaxTokens: int64(d.number("tokens", 0))}}
	hw := d.hardware()
	if d.diags.HasErrors() {
		return run, hw, d.diags
	}
	c := &run.cfg
	c.Device = d.device()
	c.Model.HF = d.absPath(cty.GetAttrPath("model"), req.WorkDir, c.Model.HF)
	c.Base, c.BaseFormat = d.weights("base", req.WorkDir, false)
	if c.Base != "" {
		c.Weights, c.WeightsFormat = d.adapters(req.WorkDir)
	} else {
		c.Weights, c.WeightsFormat = d.weights("weights", req.WorkDir, true)
	}
	for _, w := range []struct{ path, format string }{{c.Weights, c.WeightsFormat}, {c.Base, c.BaseFormat}} {
		if w.format == formatHF && c.Model.HF == "" {
			c.Model.HF = w.path // a preset's shape, the folder's rotary, norms and biases
		}
	}
	if data := known(req.Config, "data"); !data.IsNull() {
		var err error
		if c.Data, err = dataPrefixes(data, req.WorkDir); err != nil {
			d.fail(cty.GetAttrPath("data"), "Evaluation data not found", fmt.Sprintf("The data argument cannot be read as Megatron shards: %s.", err))
		}
	}
	d.texts(run, req.WorkDir, runDir)
	run.expect = d.expectations()
	d.diags = append(d.diags, checkSupported(c.Model, c.Layout, nil, c.Device)...)
	return run, hw, d.diags
}

// adapters reads weights as a LoRA fine-tune's adapters: its checkpoint
// folder (holding adapters.safetensors) or that file itself.
func (d *decoder) adapters(workDir string) (string, string) {
	p := d.absPath(cty.GetAttrPath("weights"), workDir, d.str("weights", ""))
	file := p
	if !strings.HasSuffix(p, ".safetensors") {
		file = filepath.Join(p, adaptersFile)
	}
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() {
		d.fail(cty.GetAttrPath("weights"), "No adapters",
			fmt.Sprintf("With base set, weights are a LoRA fine-tune's adapters: its checkpoint (stage.finetune.NAME.outputs.checkpoint, which holds %s) or outputs.adapters; %s has none. A fine-tune over several pipeline stages writes none: evaluate its merged weights (merge = true, outputs.merged) without base.", adaptersFile, p))
	}
	return p, formatCheckpoint
}

// adaptersFile is the trainer's one-file copy of a fine-tune's adapters,
// beside its last checkpoint.
const adaptersFile = "adapters.safetensors"

// texts reads the tokenizer, multiple_choice and generate blocks.
func (d *decoder) texts(run *evalRun, workDir, runDir string) {
	if m := known(d.c, "multiple_choice"); !m.IsNull() {
		run.questionsPath = d.absPath(cty.GetAttrPath("multiple_choice").GetAttr("path"), workDir, fieldString(m, "path", ""))
		run.cfg.Choices = &choicesFiles{Questions: filepath.Join(runDir, questionsFile), Scores: filepath.Join(runDir, scoresFile)}
	}
	if g := known(d.c, "generate"); !g.IsNull() {
		run.promptsPath = d.absPath(cty.GetAttrPath("generate").GetAttr("prompts"), workDir, fieldString(g, "prompts", ""))
		run.completionsPath = filepath.Join(runDir, completionsFile)
		run.cfg.Generate = &generateConfig{Prompts: filepath.Join(runDir, promptsFile), Completions: filepath.Join(runDir, completionIDs),
			MaxNewTokens: field(g, "max_new_tokens", defaultNewToks), Temperature: fieldNumber(g, "temperature", 0), TopP: fieldNumber(g, "top_p", 1)}
		if run.cfg.Generate.MaxNewTokens >= run.cfg.Model.SeqLen {
			d.fail(cty.GetAttrPath("generate").GetAttr("max_new_tokens"), "Completions longer than the model's context",
				fmt.Sprintf("max_new_tokens %d leaves no room for a prompt in the model's %d tokens; lower it.", run.cfg.Generate.MaxNewTokens, run.cfg.Model.SeqLen))
		}
	}
	if run.questionsPath == "" && run.promptsPath == "" {
		return
	}
	run.tokenizer = d.tokenizer(workDir, run.cfg.Model.HF)
}

// tokenizer reads the tokenizer block, or finds the model folder's
// tokenizer.json.
func (d *decoder) tokenizer(workDir, modelFolder string) tokenizerSpec {
	at := cty.GetAttrPath("tokenizer")
	if t := known(d.c, "tokenizer"); !t.IsNull() {
		spec := tokenizerSpec{kind: bpe.Kind(fieldString(t, "type", "")), encoding: fieldString(t, "encoding", ""),
			path: d.absPath(at.GetAttr("path"), workDir, fieldString(t, "path", ""))}
		if spec.kind != bpe.KindTiktoken && spec.kind != bpe.KindHF {
			d.fail(at.GetAttr("type"), "Unsupported tokenizer type", fmt.Sprintf(`type is "tiktoken" (a rank file) or "hf" (a Hugging Face tokenizer.json), not %q.`, spec.kind))
		}
		return spec
	}
	if modelFolder != "" {
		p := filepath.Join(modelFolder, "tokenizer.json")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return tokenizerSpec{kind: bpe.KindHF, path: p}
		}
	}
	d.fail(nil, "No tokenizer", "Questions and prompts are text, and the model has no folder with a tokenizer.json; add a tokenizer block naming the data prep's vocabulary, e.g. tokenizer { type = \"tiktoken\"  path = \"r50k_base.tiktoken\" }.")
	return tokenizerSpec{}
}

// expectations reads the expect block's thresholds by attribute name.
func (d *decoder) expectations() map[string]float64 {
	e := known(d.c, "expect")
	out := map[string]float64{}
	for _, x := range expectations {
		if v := attrOf(e, x.attr); !v.IsNull() && v.Type() == cty.Number {
			out[x.attr], _ = v.AsBigFloat().Float64()
		}
	}
	return out
}

func fieldNumber(obj cty.Value, name string, def float64) float64 {
	v := attrOf(obj, name)
	if v.IsNull() || v.Type() != cty.Number {
		return def
	}
	f, _ := v.AsBigFloat().Float64()
	return f
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
		return nil, api.Diagnostics{{Severity: api.Error, Summary: "Cannot start torchrun", Detail: err.Error() + "."}}
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
