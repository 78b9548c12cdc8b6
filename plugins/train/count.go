package train

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// countModel sets the run's parameter and FLOP counts, with the sliding
// window the engine read from the model's folder for the plan, so that
// the run counts what its plan counted.
func countModel(cfg *runConfig) api.Diagnostics {
	s := countShape(cfg.Model)
	params := counts.Count(s).Total(s.Layers)
	var adapters float64
	if cfg.LoRA != nil {
		per, err := counts.AdaptersPerLayer(s, cfg.LoRA.Rank, cfg.LoRA.Targets)
		if err != nil {
			// The error is the rank's or else the targets'.
			attr := "targets"
			if cfg.LoRA.Rank < 1 {
				attr = "rank"
			}
			return api.Diagnostics{{Severity: api.Error, Summary: "Invalid LoRA", Path: cty.GetAttrPath("lora").GetAttr(attr),
				Detail: fmt.Sprintf("%v.", err)}}
		}
		adapters = per * float64(s.Layers)
	}
	cfg.Params, cfg.AdapterParams = int64(params), int64(adapters)
	cfg.FLOPsPerToken = counts.ModelFLOPs(params, adapters, counts.AttentionFLOPs(s))
	return nil
}

// countShape is the model as the trainer builds it: without grouped-query
// attention where kv_heads is 0.
func countShape(m modelConfig) counts.Shape {
	kv := m.KVHeads
	if kv == 0 {
		kv = m.Heads
	}
	return counts.Shape{Layers: m.Layers, Hidden: m.Hidden, FFNHidden: m.FFNHidden, Heads: m.Heads, KVHeads: kv,
		Vocab: m.Vocab, SeqLen: m.SeqLen, TiedEmbeddings: m.TiedEmbeddings, GELU: m.Activation == "gelu",
		Window: m.Window, WindowLayers: m.WindowLayers}
}
