package plandiff

import (
	"strings"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/layout"
	"github.com/gpuflow/gpuflow/hardware"
)

// Numerics says whether a training stage still makes the same optimizer
// updates. The same global batch, tokens per step, learning-rate schedule
// and precision, with every other changed argument one that only moves
// work between GPUs (parallel degrees, micro batch, recomputation, the
// hardware), is a performance-only change: the updates are the same up to
// the order of floating-point reductions.
type Numerics struct {
	PerformanceOnly bool `json:"performance_only"`
	// Changes are what changes the numerics: global_batch,
	// tokens_per_step, precision, lr, min_lr, schedule, warmup_steps,
	// then any other argument outside the performance-only ones.
	Changes []Change `json:"changes,omitempty"`
	// Upstream names the stages it depends on that run again while its
	// body holds values known only after apply (AfterApply, such as
	// data): those values, and so the numerics, may differ. The plan
	// does not record which upstream stage a value comes from.
	Upstream   []string `json:"upstream,omitempty"`
	AfterApply []string `json:"after_apply,omitempty"`
}

// scheduleArgs are the stage arguments that make up the learning-rate
// schedule, in the order they are reported.
var scheduleArgs = []string{"lr", "min_lr", "schedule", "warmup_steps"}

// performanceOnly are argument paths that change where and how fast the
// work runs but not what it computes. Anything not listed counts as a
// numerics change, so an argument gpuflow does not know errs on the side
// of telling the reviewer.
var performanceOnly = map[string]bool{
	"checkpoint_every": true, "model.name": true,
	"layout.name": true, "layout.tp": true, "layout.pp": true, "layout.dp": true, "layout.cp": true, "layout.vp": true,
	"layout.zero": true, "layout.fsdp": true, "layout.micro_batch": true, "layout.grad_accumulation": true,
	"layout.recompute": true, "layout.sequence_parallel": true, "layout.world_size": true,
	"layout.first_stage_layers": true, "layout.last_stage_layers": true,
}

// reportedElsewhere are argument paths the named checks already cover.
var reportedElsewhere = map[string]bool{
	"layout.global_batch": true, "layout.precision": true, "model.seq_len": true,
	"lr": true, "min_lr": true, "schedule": true, "warmup_steps": true,
}

// checkNumerics compares two training stages; config is the full list of
// changed body values and upstream the changed stages it reads from.
func checkNumerics(o, n *engine.StagePlan, config []Change, upstream []string) *Numerics {
	ol, nl := o.Layout.Layout, n.Layout.Layout
	var cs []Change
	if ol.GlobalBatch != nl.GlobalBatch {
		cs = append(cs, Change{Path: "global_batch", Old: mustJSON(ol.GlobalBatch), New: mustJSON(nl.GlobalBatch)})
	}
	if o.Model != nil && n.Model != nil {
		a, b := int64(ol.GlobalBatch)*int64(o.Model.SeqLen), int64(nl.GlobalBatch)*int64(n.Model.SeqLen)
		if a != b {
			cs = append(cs, Change{Path: "tokens_per_step", Old: mustJSON(a), New: mustJSON(b)})
		}
	}
	if a, b := precision(ol), precision(nl); a != b {
		cs = append(cs, Change{Path: "precision", Old: jsonString(a), New: jsonString(b)})
	}
	for _, arg := range scheduleArgs {
		for _, c := range config {
			if c.Path == arg {
				cs = append(cs, c)
			}
		}
	}
	for _, c := range config {
		if !performanceOnly[c.Path] && !reportedElsewhere[c.Path] && !strings.HasPrefix(c.Path, "hardware.") && c.Path != "hardware" {
			cs = append(cs, c)
		}
	}
	nm := &Numerics{PerformanceOnly: len(cs) == 0 && len(upstream) == 0, Changes: cs, Upstream: upstream}
	if len(upstream) > 0 {
		nm.AfterApply = n.ConfigUnknown
	}
	return nm
}

// precision names a layout's precision; empty means the default, bf16.
func precision(l layout.Layout) string {
	if l.Precision == "" {
		return hardware.PrecisionBF16
	}
	return l.Precision
}
