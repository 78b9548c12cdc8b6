package plandiff

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gpuflow/gpuflow/engine"
	"github.com/gpuflow/gpuflow/engine/estimate"
	"github.com/gpuflow/gpuflow/engine/layout"
)

// Checkpoint verdicts: can the new layout resume from checkpoints the old
// one wrote?
const (
	// CheckpointResume: the checkpoints are split the same way; they load
	// as they are.
	CheckpointResume = "resume"
	// CheckpointReshard: the checkpoints are split differently; they load
	// only through a resharding load or after a conversion.
	CheckpointReshard = "reshard"
	// CheckpointIncompatible: another model or framework; the optimizer
	// state does not carry over.
	CheckpointIncompatible = "incompatible"
)

// Checkpoint is the answer for one training stage whose layout or model
// changes. The rule: tensor and pipeline parallelism (tp, pp, vp) decide
// how each weight is split and which layers a rank holds, so changing any
// of them needs resharding. ZeRO and FSDP shard optimizer state (and with
// stage 2 and 3 gradients and weights) over the data-parallel ranks, so
// changing the sharding, or dp or cp while sharded, needs resharding too.
// Without sharding every data-parallel rank holds the whole state, so dp,
// cp, micro batch, recomputation and precision alone change nothing on
// disk.
type Checkpoint struct {
	Verdict string   `json:"verdict"`
	Reasons []string `json:"reasons"`
	// How says, for the new side's framework, how such a checkpoint is
	// loaded; empty when it loads as it is.
	How string `json:"how,omitempty"`
}

// checkCheckpoint applies the rule to a training stage present in both
// plans.
func checkCheckpoint(o, n *engine.StagePlan) *Checkpoint {
	if r := incompatibility(o, n); len(r) > 0 {
		return &Checkpoint{Verdict: CheckpointIncompatible, Reasons: r,
			How: "only the weights can be carried over, by converting them; the optimizer state starts anew"}
	}
	ol, nl := o.Layout.Layout, n.Layout.Layout
	layers := 0
	if n.Model != nil {
		layers = n.Model.Layers
	}
	if r := reshardReasons(ol, nl, layers); len(r) > 0 {
		return &Checkpoint{Verdict: CheckpointReshard, Reasons: r, How: reshardHow(framework(n))}
	}
	reason := "tp, pp, vp, the layers per stage and the ZeRO/FSDP sharding are unchanged"
	if ol.DP != nl.DP || ol.CP != nl.CP {
		reason = degreeChanges(ol, nl) + " only, and without ZeRO/FSDP sharding every data-parallel rank holds the whole state"
	}
	return &Checkpoint{Verdict: CheckpointResume, Reasons: []string{reason}}
}

// incompatibility lists what makes the old checkpoints another model's or
// another framework's.
func incompatibility(o, n *engine.StagePlan) []string {
	var out []string
	if a, b := framework(o), framework(n); a != b {
		out = append(out, fmt.Sprintf("framework %s -> %s writes checkpoints in another format", a, b))
	}
	for _, c := range jsonChanges(mustJSON(o.Model), mustJSON(n.Model)) {
		// The name is a label; the sequence length shapes no weight.
		if c.Path != "name" && c.Path != "seq_len" {
			out = append(out, fmt.Sprintf("model %s %s -> %s changes the weights' shapes", c.Path, c.Old, c.New))
		}
	}
	return out
}

// reshardReasons applies the rule to two layouts.
func reshardReasons(a, b layout.Layout, layers int) []string {
	var out []string
	if a.TP != b.TP {
		out = append(out, fmt.Sprintf("tp %d -> %d splits every weight matrix differently", a.TP, b.TP))
	}
	if a.PP != b.PP {
		out = append(out, fmt.Sprintf("pp %d -> %d gives each pipeline rank other layers", a.PP, b.PP))
	}
	if a.PP == b.PP && a.PP > 1 {
		if r := stageLayerChange(a, b, layers); r != "" {
			out = append(out, r)
		}
	}
	if va, vb := layout.VirtualStages(a), layout.VirtualStages(b); va != vb && max(a.PP, b.PP) > 1 {
		out = append(out, fmt.Sprintf("vp %d -> %d regroups the layers each pipeline rank holds", va, vb))
	}
	sa, sb := a.ShardingStage(), b.ShardingStage()
	switch {
	case sa != sb || a.FSDP != b.FSDP:
		out = append(out, fmt.Sprintf("sharding %s -> %s splits the saved state differently", sharding(a), sharding(b)))
	case sa > 0 && (a.DP != b.DP || a.CP != b.CP):
		out = append(out, fmt.Sprintf("%s shards the optimizer state over the data-parallel ranks: %s cuts other shards",
			sharding(b), degreeChanges(a, b)))
	}
	return out
}

// degreeChanges names the data-parallel degrees that differ, "dp 2 -> 4".
func degreeChanges(a, b layout.Layout) string {
	var parts []string
	if a.DP != b.DP {
		parts = append(parts, fmt.Sprintf("dp %d -> %d", a.DP, b.DP))
	}
	if a.CP != b.CP {
		parts = append(parts, fmt.Sprintf("cp %d -> %d", a.CP, b.CP))
	}
	return strings.Join(parts, ", ")
}

// sharding names a layout's sharding for people.
func sharding(l layout.Layout) string {
	switch {
	case l.FSDP:
		return "FSDP"
	case l.ZeRO > 0:
		return fmt.Sprintf("ZeRO-%d", l.ZeRO)
	}
	return "none"
}

// reshardHow says how a framework loads a checkpoint into a new layout.
func reshardHow(fw string) string {
	switch fw {
	case estimate.FrameworkMegatron:
		return "Megatron-LM loads a checkpoint written in its distributed format (--ckpt-format torch_dist) into a new tp, pp and dp; " +
			"a legacy per-rank checkpoint (--ckpt-format torch) must first be converted with its tools/checkpoint scripts"
	case estimate.FrameworkDeepSpeed:
		return "DeepSpeed checkpoints are tied to the layout that wrote them: convert to a universal checkpoint " +
			"(deepspeed/checkpoint/ds_to_universal.py) and load that"
	}
	return "PyTorch: a checkpoint written with torch.distributed.checkpoint (DCP) reshards itself on load to the new layout; " +
		"one written per rank with torch.save does not load"
}

// framework is the stage's training framework: the estimate's, else the
// body's framework argument, else the estimator's default.
func framework(sp *engine.StagePlan) string {
	if sp.Estimate != nil && sp.Estimate.Framework != "" {
		return sp.Estimate.Framework
	}
	var body struct {
		Framework string `json:"framework"`
	}
	if json.Unmarshal(sp.Config, &body) == nil && strings.TrimSpace(body.Framework) != "" {
		return body.Framework
	}
	return estimate.DefaultFramework
}

// stageLayerChange says how the layers per pipeline stage change, or "":
// by the splits where the model's layers are known, else by the
// arguments.
func stageLayerChange(a, b layout.Layout, layers int) string {
	if layers > 0 {
		sa, sb := layout.StageLayersText(a, layers), layout.StageLayersText(b, layers)
		if sa == sb {
			return ""
		}
		return fmt.Sprintf("layers per pipeline stage %s -> %s gives each pipeline rank other layers", sa, sb)
	}
	if a.FirstStageLayers == b.FirstStageLayers && a.LastStageLayers == b.LastStageLayers {
		return ""
	}
	return fmt.Sprintf("first_stage_layers %d -> %d, last_stage_layers %d -> %d (0: the even share) give each pipeline rank other layers",
		a.FirstStageLayers, b.FirstStageLayers, a.LastStageLayers, b.LastStageLayers)
}
