package train

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// checkSupported refuses at apply what the trainer's rule table refuses;
// the plan has refused it already for a stage this trainer applies.
func checkSupported(m modelConfig, l api.Layout, lora *loraConfig, device string) api.Diagnostics {
	return checkRules(stageFacts(m, l, lora != nil, device))
}

// planRules checks the rule table at plan time, once the stage's model and
// layout are known (an auto layout's after its search). A stage planned
// for another framework is sized, not run, so the table does not apply.
func planRules(c cty.Value) api.Diagnostics {
	model, layout := known(c, "model"), known(c, "layout")
	if model.IsNull() || layout.IsNull() || !model.IsWhollyKnown() || !layout.IsWhollyKnown() {
		return nil
	}
	if f := known(c, "framework"); !f.IsNull() && !runnable(f.AsString()) {
		return nil
	}
	args, diags := decodeArgs(c)
	if diags.HasErrors() {
		return diags
	}
	return checkRules(stageFacts(args.Model, args.Layout, args.LoRA != nil, args.Device))
}
