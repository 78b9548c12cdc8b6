package train

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// checkSupported refuses, before anything starts, what the trainer cannot
// run. The engine's layout rules (divisibility, world size) are checked
// at plan time already; these are the trainer's own limits. They are
// apply-time errors so that workloads written for other frameworks still
// plan.
func checkSupported(m modelConfig, l api.Layout, lora *loraConfig) api.Diagnostics {
	var diags api.Diagnostics
	bad := func(attr, summary, detail string) {
		diags = append(diags, api.Diagnostic{Severity: api.Error, Summary: summary, Detail: detail, Path: cty.GetAttrPath(attr)})
	}
	if m.Activation != "swiglu" {
		bad("model", "Model family not supported by the trainer",
			fmt.Sprintf("gpuflow's trainer builds Llama-family models (SwiGLU, RMSNorm, rotary positions); this model's activation is %q. Use activation = \"swiglu\".", m.Activation))
	}
	if l.CP > 1 {
		bad("layout", "Context parallelism not supported by the trainer",
			fmt.Sprintf("The layout sets cp = %d; gpuflow's trainer runs cp = 1 only. Move the degree to dp or tp.", l.CP))
	}
	if m.TiedEmbeddings && (l.TP > 1 || l.PP > 1) {
		bad("layout", "Tied embeddings need tp = 1 and pp = 1",
			fmt.Sprintf("The model ties its input and output embeddings, which the trainer keeps as one unsplit weight; the layout has tp = %d, pp = %d. Set tied_embeddings = false in the model, or use data parallelism.", l.TP, l.PP))
	}
	if lora != nil && l.TP > 1 {
		bad("layout", "LoRA needs tp = 1", fmt.Sprintf("The trainer adds LoRA adapters to whole (unsplit) linear layers; the layout has tp = %d. Use dp (FSDP) to spread the model instead.", l.TP))
	}
	if l.Precision == "fp16" {
		bad("layout", "fp16 not supported by the trainer", "gpuflow's trainer trains in bf16 or fp8 and has no loss scaling, which fp16's narrow range needs to keep small gradients from flushing to zero. The plan still estimates fp16 (as Megatron-LM runs it); to run with gpuflow's trainer use precision = \"bf16\", which has the same speed on every GPU that has fp16 tensor cores from A100 on.")
	}
	if l.Precision == "fp8" && l.TP > 1 {
		bad("layout", "fp8 needs tp = 1", fmt.Sprintf("The trainer's fp8 linear layers work on whole (unsplit) weights; the layout has tp = %d. Use precision = \"bf16\" or tp = 1.", l.TP))
	}
	diags = append(diags, checkPipeline(l)...)
	return diags
}

// checkPipeline: a pipeline schedule needs at least one micro-batch per
// stage in flight, and the interleaved schedule a whole number of rounds.
func checkPipeline(l api.Layout) api.Diagnostics {
	if l.PP <= 1 || l.MicroBatch <= 0 || l.DP <= 0 {
		return nil
	}
	m := l.GradAccumulation()
	if m >= l.PP && (l.VP <= 1 || m%l.PP == 0) {
		return nil
	}
	return api.Diagnostics{{Severity: api.Error, Summary: "Too few micro-batches for the pipeline",
		Detail: fmt.Sprintf("Each step runs global_batch/(micro_batch*dp) = %d micro-batches, and pp = %d needs at least %d (a multiple of %d with vp > 1). Raise global_batch or lower micro_batch.",
			m, l.PP, l.PP, l.PP),
		Path: cty.GetAttrPath("layout")}}
}
