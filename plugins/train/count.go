package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/api/counts"
)

// countModel sets the run's parameter and FLOP counts, with the sliding
// window the model's folder sets (resolveRun has made its path absolute).
func countModel(cfg *runConfig) api.Diagnostics {
	s := countShape(cfg.Model)
	if err := readWindow(cfg.Model.HF, &s); err != nil {
		return api.Diagnostics{{Severity: api.Error, Summary: "Unusable model folder", Path: cty.GetAttrPath("model"),
			Detail: fmt.Sprintf("gpuflow reads the model folder's config.json for its sliding window, and cannot: %v. Point the model block's from at a Hugging Face folder with a readable config.json.", err)}}
	}
	params := counts.Count(s).Total(s.Layers)
	var adapters float64
	if cfg.LoRA != nil {
		per, err := counts.AdaptersPerLayer(s, cfg.LoRA.Rank, cfg.LoRA.Targets)
		if err != nil {
			return api.Diagnostics{{Severity: api.Error, Summary: "Invalid LoRA", Path: cty.GetAttrPath("lora").GetAttr("targets"),
				Detail: fmt.Sprintf("gpuflow reads the model folder's config.json for its sliding window, and cannot: %v. Point the model block's from at a Hugging Face folder with a readable config.json.", err)}}
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
		Vocab: m.Vocab, SeqLen: m.SeqLen, TiedEmbeddings: m.TiedEmbeddings, GELU: m.Activation == "gelu"}
}

// readWindow sets s's sliding window from folder's config.json, as the
// trainer reads it there; a preset (no folder) has none.
func readWindow(folder string, s *counts.Shape) error {
	if folder == "" {
		return nil
	}
	path := filepath.Join(folder, hfConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var c struct {
		Architectures []string `json:"architectures"`
		counts.Windowing
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	arch := ""
	if len(c.Architectures) > 0 {
		arch = c.Architectures[0]
	}
	s.Window, s.WindowLayers = c.Span(arch), c.Layers(arch, s.Layers)
	return nil
}
