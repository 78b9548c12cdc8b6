package train

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/sdk"
)

var schedules = map[string]bool{"cosine": true, "linear": true, "constant": true}

// frameworks are the estimator's accountings a stage may plan with;
// gpuflow (the default) and gpuflow-eager are this trainer's own.
var frameworks = map[string]bool{frameworkCompiled: true, frameworkEager: true, "pytorch-eager": true, "fsdp2": true, "megatron": true}

// The estimator's names for this trainer, compiled and without
// torch.compile; frameworkEager also makes it run eagerly.
const (
	frameworkCompiled = "gpuflow"
	frameworkEager    = "gpuflow-eager"
)

// runnable says whether apply can run a stage planned with framework:
// only this trainer's own accountings describe what apply runs.
func runnable(framework string) bool {
	return framework == frameworkCompiled || framework == frameworkEager
}

// plannedOnly says that a stage of another framework plans but does not
// apply: a warning at plan time, the error that refuses it at apply.
func plannedOnly(framework string, sev api.Severity) api.Diagnostic {
	return api.Diagnostic{Severity: sev, Summary: "Framework " + framework + " is planned only", Path: cty.GetAttrPath("framework"),
		Detail: fmt.Sprintf("The plan sizes this stage as %s would run it, but apply runs gpuflow's own trainer, so apply refuses the stage. "+
			"Keep framework = %q to size a job for %s, or set framework = \"gpuflow\" (or remove it) to plan and apply gpuflow's trainer.",
			framework, framework, framework)}
}

// validate checks a training stage body: what is known of it, as
// decoded, against what the schema cannot say.
func validate(stageType string, c cty.Value) api.Diagnostics {
	args, diags := readArgs(c)
	bad := func(attr, summary, detail string) {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: summary, Detail: detail, Path: cty.GetAttrPath(attr)})
	}
	if args.Steps == nil && args.TrainTokens == nil && !args.Unknown.Attr("steps") && !args.Unknown.Attr("train_tokens") {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "No training budget",
			Detail: fmt.Sprintf("A %s stage needs steps or train_tokens; set one of them.", stageType)})
	}
	if args.Steps != nil && args.TrainTokens != nil {
		bad("train_tokens", "Two training budgets", "Set steps or train_tokens, not both.")
	}
	lr := &args.LR
	if args.Unknown.Attr("lr") {
		lr = nil
	}
	for _, p := range []struct {
		attr string
		v    *float64
	}{{"steps", args.Steps}, {"train_tokens", args.TrainTokens}, {"lr", lr}, {"checkpoint_every", args.CheckpointEvery},
		{"eval_every", args.EvalEvery}, {"eval_batches", &args.EvalBatches}} {
		if p.v != nil && *p.v <= 0 {
			bad(p.attr, "Invalid "+p.attr, p.attr+" must be greater than zero.")
		}
	}
	if value(args.WarmupSteps) < 0 {
		bad("warmup_steps", "Invalid warmup_steps", "warmup_steps must be zero or more.")
	}
	if !schedules[args.Schedule] {
		bad("schedule", "Unknown schedule", fmt.Sprintf("schedule %q is not one of cosine, linear, constant.", args.Schedule))
	}
	if !frameworks[args.Framework] {
		bad("framework", "Unknown framework", fmt.Sprintf("framework %q is not one of gpuflow, gpuflow-eager, pytorch-eager, fsdp2, megatron.", args.Framework))
	} else if !runnable(args.Framework) {
		diags = append(diags, plannedOnly(args.Framework, api.Warning))
	}
	if args.Device != deviceCUDA && args.Device != deviceCPU {
		bad("device", "Unknown device", fmt.Sprintf("device %q is not %q or %q.", args.Device, deviceCUDA, deviceCPU))
	}
	diags = append(diags, validateValidationCounts(args)...)
	if stageType == "finetune" {
		diags = append(diags, validateLoRA(args.LoRA, append(args.Unknown, errorPaths(diags)...))...)
	}
	diags = append(diags, validateExport(stageType, args)...)
	if diags.HasErrors() || checkMeta(c).HasErrors() {
		return diags
	}
	return append(diags, planRules(args)...)
}

// validateExport: an export block names at least one folder, a pretrain
// has no adapters to export, and a finetune's whole model is its merged one.
func validateExport(stageType string, args stageArgs) api.Diagnostics {
	e := args.Export
	if e == nil {
		return nil
	}
	path := cty.GetAttrPath("export")
	fail := func(attr, summary, detail string) api.Diagnostics {
		p := path
		if attr != "" {
			p = path.GetAttr(attr)
		}
		return api.Diagnostics{{Severity: api.Error, Summary: summary, Detail: detail, Path: p}}
	}
	switch {
	case e.HF == nil && e.PEFT == nil && !args.Unknown.Has(path.GetAttr("hf")) && !args.Unknown.Has(path.GetAttr("peft")):
		return fail("", "Nothing to export", "An export block names the folder to write: hf (the model) or, for a finetune, peft (the adapters).")
	case stageType == "pretrain" && e.PEFT != nil:
		return fail("peft", "No adapters to export", "A pretrain stage trains no LoRA adapters; export its model with hf = \"PATH\".")
	case stageType == "finetune" && e.HF != nil && !args.Merge:
		return fail("hf", "Exporting the whole model needs merge = true", "A finetune's model is its base plus the adapters; set merge = true to export them merged into one Hugging Face folder, or export the adapters alone with peft = \"PATH\".")
	}
	return nil
}

// errorPaths are the paths of the errors in diags, whose values are not
// checked again.
func errorPaths(diags api.Diagnostics) []cty.Path {
	var out []cty.Path
	for _, d := range diags {
		if d.Severity == api.Error && len(d.Path) > 0 {
			out = append(out, d.Path)
		}
	}
	return out
}

// validateLoRA checks the lora block's values but those in skip (not
// known yet, or already reported).
func validateLoRA(l *loraConfig, skip sdk.Unknowns) api.Diagnostics {
	if l == nil {
		return nil
	}
	var diags api.Diagnostics
	at := cty.GetAttrPath("lora")
	for _, p := range []struct {
		attr string
		v    float64
	}{{"rank", float64(l.Rank)}, {"alpha", l.Alpha}} {
		if !skip.Has(at.GetAttr(p.attr)) && (p.v <= 0 || p.v != math.Trunc(p.v)) {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid LoRA " + p.attr,
				Detail: p.attr + " must be a positive whole number.", Path: at.GetAttr(p.attr)})
		}
	}
	if l.Dropout < 0 || l.Dropout >= 1 {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid LoRA dropout",
			Detail: "dropout must be at least 0 and below 1.", Path: at.GetAttr("dropout")})
	}
	if l.Targets != nil && len(l.Targets) == 0 {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "No LoRA targets",
			Detail: "targets must name at least one module, e.g. [\"q_proj\", \"v_proj\"].", Path: at.GetAttr("targets")})
	}
	return diags
}

// value is *p, or 0 where the body sets nothing.
func value(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// details describe a training stage in the plan; "?" stands for what is
// known only at apply time.
func details(c cty.Value) []api.Detail {
	args, _ := readArgs(c)
	num := func(v float64, path cty.Path) string {
		if args.Unknown.Has(path) {
			return "?"
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	var out []api.Detail
	if args.Steps != nil {
		out = append(out, api.Detail{Key: "budget", Value: fmt.Sprintf("%s steps", num(*args.Steps, cty.GetAttrPath("steps")))})
	}
	if args.TrainTokens != nil {
		out = append(out, api.Detail{Key: "budget", Value: fmt.Sprintf("%s tokens", num(*args.TrainTokens, cty.GetAttrPath("train_tokens")))})
	}
	opt := fmt.Sprintf("AdamW, lr %s, %s schedule", num(args.LR, cty.GetAttrPath("lr")), args.Schedule)
	if args.WarmupSteps != nil {
		opt += fmt.Sprintf(", %s warm-up steps", num(*args.WarmupSteps, cty.GetAttrPath("warmup_steps")))
	}
	out = append(out, api.Detail{Key: "optimizer", Value: opt})
	if l := args.LoRA; l != nil {
		at := cty.GetAttrPath("lora")
		targets := strings.Join(l.Targets, ", ")
		if args.Unknown.Has(at.GetAttr("targets")) {
			targets = "?"
		}
		out = append(out, api.Detail{Key: "lora", Value: fmt.Sprintf("rank %s, alpha %s, targets %s",
			num(float64(l.Rank), at.GetAttr("rank")), num(l.Alpha, at.GetAttr("alpha")), targets)})
	}
	return out
}
