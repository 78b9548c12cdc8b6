package estimate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// Count counts a shape's parameters by where they live, with the formula
// the trainer's MFU is computed with too (package counts).
func Count(s model.Shape) counts.Params { return counts.Count(countShape(s)) }

// countShape is what the counts read of a shape.
func countShape(s model.Shape) counts.Shape {
	return counts.Shape{Layers: s.Layers, Hidden: s.Hidden, FFNHidden: s.FFNHidden, Heads: s.Heads, KVHeads: s.KVHeads,
		Vocab: s.Vocab, SeqLen: s.SeqLen, TiedEmbeddings: s.TiedEmbeddings, GELU: s.Activation == model.ActivationGELU,
		Window: s.Window, WindowLayers: s.WindowLayers}
}

// LoRA describes low-rank adapters on a frozen model.
type LoRA struct {
	Rank int `json:"rank"`
	// Targets names the adapted linear layers: q, k, v, o, gate, up, down
	// (Hugging Face's q_proj ... down_proj are accepted), or "all-linear".
	Targets []string `json:"targets"`
}

// Key names the adapters for calibration run keys: "lora r16 o,q,v", the
// targets normalised and sorted; "" for nil (the whole model trains).
func (l *LoRA) Key() string {
	if l == nil {
		return ""
	}
	targets := make([]string, 0, len(l.Targets))
	for _, t := range l.Targets {
		targets = append(targets, counts.TargetName(t))
	}
	sort.Strings(targets)
	return fmt.Sprintf("lora r%d %s", l.Rank, strings.Join(targets, ","))
}

// adapterParamsPerLayer counts one layer's adapter parameters: r*(in+out)
// per adapted matrix.
func adapterParamsPerLayer(s model.Shape, l LoRA) (float64, error) {
	return counts.AdaptersPerLayer(countShape(s), l.Rank, l.Targets)
}

// adaptedMatrices is the set of a LoRA's targets by short name, among
// the linear layers of s.
func adaptedMatrices(s model.Shape, targets []string) map[string]bool {
	set := map[string]bool{}
	for _, t := range counts.ExpandTargets(countShape(s), targets) {
		set[counts.TargetName(t)] = true
	}
	return set
}
