package engine

import (
	"fmt"
	"math/big"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/layout"
)

// resolvedLayout is a layout block with its defaults applied. Auto layouts
// carry the search request; their degrees are chosen per stage.
type resolvedLayout struct {
	Block  *dsl.Layout
	Layout layout.Layout
	Auto   *dsl.AutoLayout
}

// Objectives an auto layout may optimise.
const (
	objectiveThroughput = "throughput"
	objectiveCost       = "cost"
)

// resolveLayout applies the language's documented defaults: tp, pp, cp and
// vp are 1, zero is 0, recompute "none", precision "bf16". dp, micro_batch
// and global_batch have no default because no value is safe to assume.
func resolveLayout(b *dsl.Layout) (*resolvedLayout, hcl.Diagnostics) {
	s := b.Spec
	r := &resolvedLayout{Block: b, Auto: s.Auto}
	l := layout.Layout{TP: 1, PP: 1, CP: 1, VP: 1, DP: 0, Recompute: layout.RecomputeNone, Precision: "bf16"}
	copyInt(&l.TP, s.TP)
	copyInt(&l.PP, s.PP)
	copyInt(&l.CP, s.CP)
	copyInt(&l.VP, s.VP)
	copyInt(&l.DP, s.DP)
	copyInt(&l.ZeRO, s.ZeRO)
	copyInt(&l.MicroBatch, s.MicroBatch)
	copyInt(&l.GlobalBatch, s.GlobalBatch)
	if s.FSDP != nil {
		l.FSDP = *s.FSDP
	}
	if s.SequenceParallel != nil {
		l.SequenceParallel = *s.SequenceParallel
	}
	if s.Recompute != nil {
		l.Recompute = *s.Recompute
	}
	if s.Precision != nil {
		l.Precision = *s.Precision
	}
	if s.Attention != nil {
		l.Attention = *s.Attention
	}
	if s.GradReduceDType != nil {
		l.GradReduceDType = *s.GradReduceDType
	}
	l.ScatterGather, l.OverlapGradReduce, l.GradAccumFusion = s.ScatterGather, s.OverlapGradReduce, s.GradAccumFusion
	l.AsyncTPAllReduce, l.ScatterGatherGrads = s.AsyncTPAllReduce, s.ScatterGatherGrads
	diags := stageLayers(b, &l)
	r.Layout = l
	if s.Auto != nil {
		diags = append(diags, checkAuto(b)...)
		for _, name := range []string{"first_stage_layers", "last_stage_layers"} {
			if _, set := b.Ranges[name]; set {
				diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Argument ignored by the layout search",
					Detail:  fmt.Sprintf("Layout %q has an auto block, whose search chooses pp and balances the first and last stage's layers itself; remove %s, or remove the auto block and write the layout.", b.Name, name),
					Subject: rangeOr(b.Ranges, name, b.DeclRange)})
			}
		}
		return r, diags
	}
	for _, req := range []struct {
		name string
		v    *int
	}{{"dp", s.DP}, {"micro_batch", s.MicroBatch}, {"global_batch", s.GlobalBatch}} {
		if req.v == nil {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing layout argument",
				Detail:  fmt.Sprintf("Layout %q must set %s (or contain an auto block to let gpuflow choose). Add %s = ....", b.Name, req.name, req.name),
				Subject: b.DeclRange.Ptr()})
		}
	}
	if diags.HasErrors() {
		return r, diags
	}
	// Every declared layout, used by a stage or not, passes its own rules.
	diags = append(diags, findingDiagnostics(layout.CheckOwn(l), b, b.DeclRange)...)
	return r, append(diags, checkWorldFits(b, l)...)
}

// maxWorldSize is more GPUs than a hardware block can declare (nodes and
// GPUs per node are each at most 2^20).
const maxWorldSize = 1 << 40

// checkWorldFits refuses a layout whose world size tp*pp*dp*cp is beyond
// any hardware. Each degree fits in 32 bits, but their product may not fit
// in an int, and the layout rules multiply them.
func checkWorldFits(b *dsl.Layout, l layout.Layout) hcl.Diagnostics {
	if min(l.TP, l.PP, l.DP, l.CP) < 1 {
		return nil // the positive-degree rule reports these
	}
	ws := new(big.Int).SetInt64(int64(l.TP))
	for _, d := range []int{l.PP, l.DP, l.CP} {
		ws.Mul(ws, big.NewInt(int64(d)))
	}
	if ws.Cmp(big.NewInt(maxWorldSize)) <= 0 {
		return nil
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Layout rule world-size",
		Detail: fmt.Sprintf("tp*pp*dp*cp = %d*%d*%d*%d = %s GPUs, more than any hardware holds; change dp (or tp, pp, cp) so the product is the number of GPUs the stage uses.",
			l.TP, l.PP, l.DP, l.CP, ws),
		Subject: rangeOr(b.Ranges, "dp", b.DeclRange)}}
}

func checkAuto(b *dsl.Layout) hcl.Diagnostics {
	a := b.Spec.Auto
	if a.Objective == nil || *a.Objective == objectiveThroughput || *a.Objective == objectiveCost {
		return nil
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid auto layout objective",
		Detail:  fmt.Sprintf("objective is %q; use %q or %q.", *a.Objective, objectiveThroughput, objectiveCost),
		Subject: rangeOr(b.Ranges, "auto.objective", b.DeclRange)}}
}

// stageLayers copies first_stage_layers and last_stage_layers. Zero is
// how the layout says "split evenly", so a written zero is refused rather
// than read as that.
func stageLayers(b *dsl.Layout, l *layout.Layout) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, f := range []struct {
		name string
		src  *int
		dst  *int
	}{{"first_stage_layers", b.Spec.FirstStageLayers, &l.FirstStageLayers}, {"last_stage_layers", b.Spec.LastStageLayers, &l.LastStageLayers}} {
		if f.src == nil {
			continue
		}
		if *f.src < 1 {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid " + f.name,
				Detail:  fmt.Sprintf("%s is %d; a pipeline stage holds at least one layer. Set it to 1 or more, or leave it out to split the layers evenly.", f.name, *f.src),
				Subject: rangeOr(b.Ranges, f.name, b.DeclRange)})
			continue
		}
		*f.dst = *f.src
	}
	return diags
}

func copyInt(dst *int, src *int) {
	if src != nil {
		*dst = *src
	}
}

// layoutValue is what a workload sees for layout.NAME.
func layoutValue(name string, l layout.Layout) cty.Value {
	n := func(v int) cty.Value { return cty.NumberIntVal(int64(v)) }
	attrs := map[string]cty.Value{
		"name":              cty.StringVal(name),
		"tp":                n(l.TP),
		"pp":                n(l.PP),
		"dp":                n(l.DP),
		"cp":                n(l.CP),
		"vp":                n(l.VP),
		"zero":              n(l.ZeRO),
		"fsdp":              cty.BoolVal(l.FSDP),
		"micro_batch":       n(l.MicroBatch),
		"global_batch":      n(l.GlobalBatch),
		"recompute":         cty.StringVal(l.Recompute),
		"sequence_parallel": cty.BoolVal(l.SequenceParallel),
		"precision":         cty.StringVal(l.Precision),
		"world_size":        n(l.WorldSize()),
		"grad_accumulation": n(l.GradAccumulation()),
	}
	// The stage layer counts reach the stage's plugin (the trainer places
	// its layers by them) and so the stage's inputs: changing one changes
	// the stage. Left out where unset, so that a layout with an even split
	// keeps the inputs, and the applied stages, it had before they existed.
	if l.FirstStageLayers != 0 {
		attrs["first_stage_layers"] = n(l.FirstStageLayers)
	}
	if l.LastStageLayers != 0 {
		attrs["last_stage_layers"] = n(l.LastStageLayers)
	}
	return cty.ObjectVal(attrs)
}

// findingDiagnostics turns layout rule findings into diagnostics pointing
// at the layout argument to change, or at the stage's use of the layout.
func findingDiagnostics(fs []layout.Finding, b *dsl.Layout, use hcl.Range) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, f := range fs {
		sev := hcl.DiagError
		if f.Severity == layout.SeverityWarning {
			sev = hcl.DiagWarning
		}
		subject := use.Ptr()
		if b != nil {
			subject = rangeOr(b.Ranges, f.Field, use)
		}
		diags = diags.Append(&hcl.Diagnostic{Severity: sev, Summary: fmt.Sprintf("Layout rule %s", f.Rule),
			Detail: f.Message, Subject: subject})
	}
	return diags
}
