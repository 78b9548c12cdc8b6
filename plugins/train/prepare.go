package train

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// Launch is a trainer run made ready: its files written into the run
// folder and its torchrun command rendered. A multi-node executor sets
// Torchrun's Endpoint and JobID and runs the same command on each of
// Torchrun.Nodes nodes, with Env laid over the node's environment.
type Launch struct {
	Torchrun Torchrun
	// Env is what the trainer needs on top of the inherited environment.
	Env map[string]string
	// RunDir is the run's folder, absolute; the trainer runs in it.
	RunDir string
	// Config is what the trainer reads; its checkpoint folder and the
	// checkpoint it resumes from (if any) are in it.
	Config runConfig
}

// Environ lays the launch's environment over base (os.Environ(), say).
func (l *Launch) Environ(base []string) []string { return environ(base, l.Env) }

// tensorBoardFolder is the run folder's subfolder for the trainer's
// TensorBoard event files.
const tensorBoardFolder = "tensorboard"

// Options tune how a stage is launched.
type Options struct {
	// Python is the interpreter; empty means $GPUFLOW_PYTHON, else python3.
	Python string
	// StopGrace replaces DefaultStopGrace when positive.
	StopGrace time.Duration
}

// Prepare decodes an apply request into a launch: it checks what the
// trainer supports, finds the data and the checkpoint to resume from, and
// writes the trainer and its config.json into req.RunDir.
func Prepare(req *api.ApplyRequest, opts Options) (*Launch, api.Diagnostics) {
	runDir, err := filepath.Abs(req.RunDir) // the trainer runs inside it, so relative paths would not resolve
	if err != nil {
		return nil, api.Diagnostics{ioDiagnostic("Cannot find the run folder", err)}
	}
	cfg, hw, diags := decodeRun(req)
	if diags.HasErrors() {
		return nil, diags
	}
	nodes, procs, d := processes(cfg.Layout, hw, cfg.Device)
	if diags = append(diags, d...); diags.HasErrors() {
		return nil, diags
	}
	endpoint, jobID := req.Env[api.EnvRendezvous], req.Env[api.EnvRendezvousID]
	if nodes > 1 && endpoint == "" {
		return nil, append(diags, api.Diagnostic{Severity: api.Error, Summary: "Multi-node training needs a cluster executor", Path: cty.GetAttrPath("layout"),
			Detail: fmt.Sprintf("The layout runs %d processes on %d nodes, but the stage runs on this machine alone. Give it an executor (executor = executor.slurm.NAME) so every node starts its part through a torchrun rendezvous, or choose a layout of at most %d GPUs.", cfg.Layout.WorldSize(), nodes, procs)})
	}
	if err := resolveCheckpoints(stageDir(runDir, req.Env), &cfg); err != nil {
		return nil, append(diags, ioDiagnostic("Cannot read the checkpoint folder", err))
	}
	script, err := writeTrainer(filepath.Join(runDir, "trainer"))
	if err != nil {
		return nil, append(diags, ioDiagnostic("Cannot write the trainer", err))
	}
	cfg.TensorBoardDir = filepath.Join(runDir, tensorBoardFolder)
	configPath := filepath.Join(runDir, "config.json")
	if err := writeJSON(configPath, cfg); err != nil {
		return nil, append(diags, ioDiagnostic("Cannot write the trainer's config", err))
	}
	return &Launch{
		Torchrun: Torchrun{Python: python(opts), Script: script, Config: configPath, Nodes: nodes, ProcsPerNode: procs,
			Endpoint: endpoint, JobID: jobID},
		Env:    trainerEnv(req.Env, hw),
		RunDir: runDir,
		Config: cfg,
	}, diags
}

func python(opts Options) string {
	if opts.Python != "" {
		return opts.Python
	}
	if p := os.Getenv("GPUFLOW_PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// decodeRun reads the stage body into the trainer's config.
func decodeRun(req *api.ApplyRequest) (runConfig, hardwareConfig, api.Diagnostics) {
	args, diags := decodeArgs(req.Config)
	cfg := runConfig{
		Stage: req.Type + "." + req.Name, Type: req.Type,
		Model: args.Model, Layout: args.Layout,
		LR: args.LR, MinLR: args.LR / 10, Schedule: args.Schedule,
		WarmupSteps: int64(value(args.WarmupSteps)), WeightDecay: args.WeightDecay,
		Seed: int64(args.Seed), CheckpointEvery: int64(value(args.CheckpointEvery)),
		Checkpoint: os.Getenv("GPUFLOW_TRAIN_CHECKPOINT") != "0", KeepCheckpoints: defaultKeepCheckpoints,
		Compile: args.Framework != frameworkEager && os.Getenv("GPUFLOW_TRAIN_COMPILE") != "0",
		LoRA:    args.LoRA, Merge: args.Merge,
	}
	if args.MinLR != nil {
		cfg.MinLR = *args.MinLR
	}
	if !runnable(args.Framework) {
		diags = append(diags, plannedOnly(args.Framework, api.Error))
	}
	if diags.HasErrors() {
		return cfg, args.Hardware, diags
	}
	cfg.Steps = stepBudget(args, cfg.Model, cfg.Layout)
	cfg.PeakFLOPS = args.Hardware.TFLOPS[cfg.Layout.Precision] * 1e12
	diags = append(diags, resolveRun(req, args, &cfg)...)
	diags = append(diags, countModel(&cfg)...)
	return cfg, args.Hardware, append(diags, checkRun(cfg)...)
}

// resolveRun finds the run's files: its data, the model's folder, the
// weights it starts from and the folders it exports to.
func resolveRun(req *api.ApplyRequest, args stageArgs, cfg *runConfig) api.Diagnostics {
	diags := resolveData(args, req.WorkDir, cfg)
	cfg.Device = args.Device
	diags = append(diags, checkDevice(cfg.Device)...)
	cfg.Compile = cfg.Compile && cfg.Device != deviceCPU // CPU ranks run eagerly
	var d api.Diagnostics
	cfg.Model.HF, d = absPath(cty.GetAttrPath("model"), req.WorkDir, cfg.Model.HF)
	diags = append(diags, d...)
	if req.Type == "finetune" {
		cfg.Base, cfg.BaseFormat, d = weights("base", args.Base, req.WorkDir, true)
	} else {
		cfg.Base, cfg.BaseFormat, d = weights("init", args.Init, req.WorkDir, false)
	}
	diags = append(diags, d...)
	if cfg.BaseFormat == formatHF && cfg.Model.HF == "" {
		cfg.Model.HF = cfg.Base // a preset's shape, the base's rotary, norms and biases
	}
	return append(diags, export(args.Export, req.WorkDir, cfg)...)
}

// resolveData finds the training shards, the loss masks beside them and
// the validation shards.
func resolveData(args stageArgs, workDir string, cfg *runConfig) api.Diagnostics {
	var err error
	if cfg.Data, err = dataPrefixes(args.Data, workDir); err != nil {
		return api.Diagnostics{{Severity: api.Error, Summary: "Training data not found", Path: cty.GetAttrPath("data"),
			Detail: fmt.Sprintf("The data argument cannot be read as Megatron shards: %s.", err)}}
	}
	if cfg.Masks, err = lossMasks(cfg.Data); err != nil {
		return api.Diagnostics{{Severity: api.Error, Summary: "Loss masks incomplete", Path: cty.GetAttrPath("data"), Detail: err.Error() + "."}}
	}
	return validation(args, workDir, cfg)
}

// checkRun refuses a run without a budget or that the trainer cannot run.
func checkRun(cfg runConfig) api.Diagnostics {
	var diags api.Diagnostics
	if cfg.Steps <= 0 {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "No training budget", Path: cty.GetAttrPath("steps"),
			Detail: "Set steps, or train_tokens of at least one global batch."})
	}
	return append(diags, checkSupported(cfg.Model, cfg.Layout, cfg.LoRA, cfg.Device)...)
}

// stepBudget is the optimizer step budget: steps, or train_tokens rounded
// up to whole global batches.
func stepBudget(args stageArgs, m modelConfig, l api.Layout) int64 {
	if value(args.Steps) > 0 {
		return int64(math.Ceil(*args.Steps))
	}
	perStep := float64(l.GlobalBatch) * float64(m.SeqLen)
	if value(args.TrainTokens) <= 0 || perStep <= 0 {
		return 0
	}
	return int64(math.Ceil(*args.TrainTokens / perStep))
}

// processes places the layout's ranks on nodes: one process per GPU, or
// all on this machine's CPU cores.
func processes(l api.Layout, hw hardwareConfig, device string) (nodes, procs int, diags api.Diagnostics) {
	world, per := l.WorldSize(), hw.GPUsPerNode
	if per <= 0 || world <= per || device == deviceCPU {
		return 1, world, nil
	}
	nodes = (world + per - 1) / per
	if world%per != 0 {
		return nodes, per, api.Diagnostics{{Severity: api.Error, Summary: "Layout does not fill whole nodes", Path: cty.GetAttrPath("layout"),
			Detail: fmt.Sprintf("The layout runs %d processes, which does not fill nodes of %d GPUs. Choose degrees whose product is a multiple of %d.", world, per, per)}}
	}
	return nodes, per, nil
}

// resolveCheckpoints sets where checkpoints go and which one to resume.
func resolveCheckpoints(stageDir string, cfg *runConfig) error {
	root, err := checkpointRoot(stageDir, *cfg)
	if err != nil {
		return err
	}
	cfg.CheckpointDir = root
	latest, ok, err := latestCheckpoint(root)
	if ok {
		cfg.ResumeFrom = latest.Path
	}
	return err
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func ioDiagnostic(summary string, err error) api.Diagnostic {
	return api.Diagnostic{Severity: api.Error, Summary: summary, Detail: err.Error() + "."}
}

// stageDir is the stage's own folder, which outlives each run and holds its
// checkpoints: the parent of the run folder, or on a cluster, where each
// node runs in RUN/job-ID/node-N, the parent of RUN (found from the job
// folder, which every node shares).
func stageDir(runDir string, env map[string]string) string {
	if jobDir := env[api.EnvJobDir]; jobDir != "" {
		return filepath.Dir(filepath.Dir(jobDir))
	}
	return filepath.Dir(runDir)
}
