package train

import (
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
func planRules(args stageArgs) api.Diagnostics {
	if args.Unknown.Attr("model") || args.Unknown.Attr("layout") || !runnable(args.Framework) {
		return nil
	}
	return checkRules(stageFacts(args.Model, args.Layout, args.LoRA != nil, args.Device))
}
