package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/engine/model/hf"
	"github.com/gpuflow/gpuflow/plugins/api"
)

// checkWeights checks the folders of weights a stage starts from (its
// contract's Weights: a finetune's base, a pretrain's init) where the
// path is known at plan time and names a Hugging Face folder: the folder
// must be one the trainer reads (config.json, every shard the index
// names, tensors of the shapes and storage types config.json implies,
// from the safetensors headers alone) and of the stage's model's shape.
// A path another stage produces, a folder not there yet and a gpuflow
// checkpoint are the plugin's to check when the stage applies.
func (p *planner) checkWeights(n *stageNode, sp *StagePlan, config cty.Value) hcl.Diagnostics {
	if n.plugin.Contract == nil || sp.Model == nil || !config.Type().IsObjectType() || config.IsNull() {
		return nil
	}
	var diags hcl.Diagnostics
	for _, name := range n.plugin.Contract.Weights {
		path, ok := knownString(config, cty.GetAttrPath(name))
		if !ok {
			continue
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.w.Config.Dir, path)
		}
		if st, err := os.Stat(filepath.Join(path, hf.ConfigFile)); err != nil || !st.Mode().IsRegular() {
			continue
		}
		if detail := folderProblem(path, name, sp.Model); detail != "" {
			d := api.Diagnostics{{Severity: api.Error, Summary: "Unusable " + name + " folder", Detail: detail, Path: cty.GetAttrPath(name)}}
			diags = append(diags, api.ToHCL(d, n.cfg.Body, n.spec)...)
		}
	}
	return diags
}

// folderProblem says what is wrong with the Hugging Face folder at path
// as the weights of the stage's model, or "".
func folderProblem(path, attr string, m *StageModel) string {
	c, err := hf.ReadConfig(path)
	if err == nil {
		err = hf.CheckWeights(path, c)
	}
	if err != nil {
		return fmt.Sprintf("gpuflow cannot start training from this folder: %v.", err)
	}
	if diff := shapeDifferences(c, m.Shape); len(diff) > 0 {
		return fmt.Sprintf("The folder's config.json does not describe model.%s: %s. Point %s at the folder of the model the stage trains, or name that folder in the model block (from = %q), which takes its shape from config.json.",
			m.Name, strings.Join(diff, "; "), attr, path)
	}
	return ""
}

// shapeDifferences lists where the folder's config.json and want, the
// stage's model, disagree on what the weights' shapes depend on, and on
// the sliding window, which the trainer takes from the folder while the
// plan counts the model's, under the file's own keys (GPT-2's n_layer,
// n_embd, ...).
func shapeDifferences(c *hf.Config, want model.Shape) []string {
	folder := c.Shape()
	var out []string
	add := func(arg string, got, need any) {
		if got != need {
			out = append(out, fmt.Sprintf("%s = %v where the model has %s = %v", c.Key(arg), got, arg, need))
		}
	}
	add("layers", folder.Layers, want.Layers)
	add("hidden", folder.Hidden, want.Hidden)
	add("ffn_hidden", folder.FFNHidden, want.FFNHidden)
	add("heads", folder.Heads, want.Heads)
	add("kv_heads", folder.KVHeads, want.KVHeads)
	add("vocab", folder.Vocab, want.Vocab)
	add("tied_embeddings", folder.TiedEmbeddings, want.TiedEmbeddings)
	add("sliding_window", windowing(folder, want.SeqLen), windowing(want, want.SeqLen))
	return out
}

// windowing is how a model's sliding window acts at seq tokens: "none"
// where it is as long as the sequence or longer.
func windowing(s model.Shape, seq int) string {
	if s.Window <= 0 || s.Window >= seq || s.WindowLayers <= 0 {
		return "none"
	}
	return fmt.Sprintf("%d tokens in %d of %d layers", s.Window, min(s.WindowLayers, s.Layers), s.Layers)
}
