package train

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
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

func validate(stageType string, c cty.Value) api.Diagnostics {
	var diags api.Diagnostics
	bad := func(attr, summary, detail string) {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: summary, Detail: detail, Path: cty.GetAttrPath(attr)})
	}
	steps, tokens := known(c, "steps"), known(c, "train_tokens")
	if steps.IsNull() && tokens.IsNull() && c.GetAttr("steps").IsKnown() && c.GetAttr("train_tokens").IsKnown() {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "No training budget",
			Detail: fmt.Sprintf("A %s stage needs steps or train_tokens; set one of them.", stageType)})
	}
	if !steps.IsNull() && !tokens.IsNull() {
		bad("train_tokens", "Two training budgets", "Set steps or train_tokens, not both.")
	}
	for _, attr := range []string{"steps", "train_tokens", "lr", "checkpoint_every", "eval_every", "eval_batches"} {
		if v := known(c, attr); !v.IsNull() && v.AsBigFloat().Sign() <= 0 {
			bad(attr, "Invalid "+attr, attr+" must be greater than zero.")
		}
	}
	if v := known(c, "warmup_steps"); !v.IsNull() && v.AsBigFloat().Sign() < 0 {
		bad("warmup_steps", "Invalid warmup_steps", "warmup_steps must be zero or more.")
	}
	if v := known(c, "schedule"); !v.IsNull() && !schedules[v.AsString()] {
		bad("schedule", "Unknown schedule", fmt.Sprintf("schedule %q is not one of cosine, linear, constant.", v.AsString()))
	}
	if v := known(c, "framework"); !v.IsNull() && !frameworks[v.AsString()] {
		bad("framework", "Unknown framework", fmt.Sprintf("framework %q is not one of gpuflow, gpuflow-eager, pytorch-eager, fsdp2, megatron.", v.AsString()))
	} else if !v.IsNull() && !runnable(v.AsString()) {
		diags = append(diags, plannedOnly(v.AsString(), api.Warning))
	}
	if v := known(c, "device"); !v.IsNull() && v.AsString() != deviceCUDA && v.AsString() != deviceCPU {
		bad("device", "Unknown device", fmt.Sprintf("device %q is not %q or %q.", v.AsString(), deviceCUDA, deviceCPU))
	}
	diags = append(diags, validateValidationCounts(c)...)
	if stageType == "finetune" {
		diags = append(diags, validateLoRA(c.GetAttr("lora"))...)
	}
	diags = append(diags, validateExport(stageType, c)...)
	return append(diags, planRules(c)...)
}

// validateExport: an export block names at least one folder, a pretrain
// has no adapters to export, and a finetune's whole model is its merged one.
func validateExport(stageType string, c cty.Value) api.Diagnostics {
	e := known(c, "export")
	if e.IsNull() {
		return nil
	}
	path := cty.GetAttrPath("export")
	hf, peft := known(e, "hf"), known(e, "peft")
	fail := func(attr, summary, detail string) api.Diagnostics {
		p := path
		if attr != "" {
			p = path.GetAttr(attr)
		}
		return api.Diagnostics{{Severity: api.Error, Summary: summary, Detail: detail, Path: p}}
	}
	switch {
	case hf.IsNull() && peft.IsNull() && e.GetAttr("hf").IsKnown() && e.GetAttr("peft").IsKnown():
		return fail("", "Nothing to export", "An export block names the folder to write: hf (the model) or, for a finetune, peft (the adapters).")
	case stageType == "pretrain" && !peft.IsNull():
		return fail("peft", "No adapters to export", "A pretrain stage trains no LoRA adapters; export its model with hf = \"PATH\".")
	case stageType == "finetune" && !hf.IsNull() && !boolAttr(c, "merge"):
		return fail("hf", "Exporting the whole model needs merge = true", "A finetune's model is its base plus the adapters; set merge = true to export them merged into one Hugging Face folder, or export the adapters alone with peft = \"PATH\".")
	}
	return nil
}

func boolAttr(c cty.Value, attr string) bool {
	v := known(c, attr)
	return !v.IsNull() && v.Type() == cty.Bool && v.True()
}

func validateLoRA(l cty.Value) api.Diagnostics {
	if l.IsNull() || !l.IsKnown() {
		return nil
	}
	var diags api.Diagnostics
	for _, attr := range []string{"rank", "alpha"} {
		v := l.GetAttr(attr)
		if v.IsKnown() && !v.IsNull() && (v.AsBigFloat().Sign() <= 0 || !v.AsBigFloat().IsInt()) {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid LoRA " + attr,
				Detail: attr + " must be a positive whole number.", Path: cty.GetAttrPath("lora").GetAttr(attr)})
		}
	}
	if d := l.GetAttr("dropout"); d.IsKnown() && !d.IsNull() {
		f, _ := d.AsBigFloat().Float64()
		if f < 0 || f >= 1 {
			diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "Invalid LoRA dropout",
				Detail: "dropout must be at least 0 and below 1.", Path: cty.GetAttrPath("lora").GetAttr("dropout")})
		}
	}
	if t := l.GetAttr("targets"); t.IsKnown() && !t.IsNull() && t.LengthInt() == 0 {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: "No LoRA targets",
			Detail: "targets must name at least one module, e.g. [\"q_proj\", \"v_proj\"].", Path: cty.GetAttrPath("lora").GetAttr("targets")})
	}
	return diags
}

// known returns the attribute, or null when it is absent or not yet known.
func known(c cty.Value, attr string) cty.Value {
	if c.IsNull() || !c.IsKnown() || !c.Type().IsObjectType() || !c.Type().HasAttribute(attr) {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	v := c.GetAttr(attr)
	if !v.IsKnown() || v.IsNull() {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	return v
}

func details(c cty.Value) []api.Detail {
	var out []api.Detail
	if v := known(c, "steps"); !v.IsNull() {
		out = append(out, api.Detail{Key: "budget", Value: fmt.Sprintf("%s steps", num(v))})
	}
	if v := known(c, "train_tokens"); !v.IsNull() {
		out = append(out, api.Detail{Key: "budget", Value: fmt.Sprintf("%s tokens", num(v))})
	}
	sched := "cosine"
	if v := known(c, "schedule"); !v.IsNull() {
		sched = v.AsString()
	}
	opt := fmt.Sprintf("AdamW, lr %s, %s schedule", num(known(c, "lr")), sched)
	if v := known(c, "warmup_steps"); !v.IsNull() {
		opt += fmt.Sprintf(", %s warm-up steps", num(v))
	}
	out = append(out, api.Detail{Key: "optimizer", Value: opt})
	if l := known(c, "lora"); !l.IsNull() {
		out = append(out, api.Detail{Key: "lora", Value: fmt.Sprintf("rank %s, alpha %s, targets %s",
			num(l.GetAttr("rank")), num(l.GetAttr("alpha")), list(l.GetAttr("targets")))})
	}
	return out
}

func num(v cty.Value) string {
	if v.IsNull() || !v.IsKnown() {
		return "?"
	}
	return v.AsBigFloat().Text('g', 6)
}

func list(v cty.Value) string {
	if v.IsNull() || !v.IsKnown() {
		return "?"
	}
	out := ""
	for i, e := range v.AsValueSlice() {
		if i > 0 {
			out += ", "
		}
		out += e.AsString()
	}
	return out
}
