package engine

import (
	"fmt"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/model"
	"github.com/gpuflow/gpuflow/engine/model/hf"
)

// resolveFolder reads the shape of a model block that names a Hugging Face
// folder: config.json gives it, the safetensors headers must agree with
// it, and the block's own arguments may only repeat it (seq_len, the
// training length, is the workload's to choose).
func resolveFolder(m *dsl.Model, dir string) (model.Shape, hcl.Diagnostics) {
	spec := m.Spec
	from := rangeOr(m.Ranges, "from", m.DeclRange)
	bad := func(summary, detail string, subject *hcl.Range) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: subject}}
	}
	if spec.Preset != nil {
		return model.Shape{}, bad("Two model sources", "A model block takes its shape from a preset or from a Hugging Face folder, not both. Remove preset.", rangeOr(m.Ranges, "preset", m.DeclRange))
	}
	path := *spec.From
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	c, err := hf.ReadConfig(path)
	if err == nil {
		err = hf.CheckWeights(path, c)
	}
	if err != nil {
		return model.Shape{}, bad("Unusable model folder", fmt.Sprintf("gpuflow cannot train from this folder: %v.", err), from)
	}
	s := c.Shape()
	s.From = *spec.From
	diags := contradictions(m, s, c)
	if spec.SeqLen != nil {
		s.SeqLen = *spec.SeqLen
	}
	if c.GPT2() && s.SeqLen > c.MaxPositionEmbeddings {
		diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Sequence longer than the position table",
			Detail: fmt.Sprintf("GPT-2 learns one position embedding per position, and the folder's table has n_positions = %d rows; seq_len is %d. Set seq_len to at most %d.",
				c.MaxPositionEmbeddings, s.SeqLen, c.MaxPositionEmbeddings),
			Subject: rangeOr(m.Ranges, "seq_len", *from)})
	}
	if diags.HasErrors() {
		return s, diags
	}
	return s, checkShape(m, s)
}

// contradictions reports each shape argument that disagrees with
// config.json, at its own line, naming the file's key for it.
func contradictions(m *dsl.Model, s model.Shape, c *hf.Config) hcl.Diagnostics {
	spec := m.Spec
	var diags hcl.Diagnostics
	check := func(name string, set bool, given, want any) {
		if !set || given == want {
			return
		}
		key := c.Key(name)
		diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Model argument contradicts config.json",
			Detail: fmt.Sprintf("%s = %v, but the folder's config.json has %s = %v. Remove %s: a model read from a folder takes its shape from config.json.",
				name, given, key, want, name),
			Subject: rangeOr(m.Ranges, name, m.DeclRange)})
	}
	intOf := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	check("layers", spec.Layers != nil, intOf(spec.Layers), s.Layers)
	check("hidden", spec.Hidden != nil, intOf(spec.Hidden), s.Hidden)
	check("ffn_hidden", spec.FFNHidden != nil, intOf(spec.FFNHidden), s.FFNHidden)
	check("heads", spec.Heads != nil, intOf(spec.Heads), s.Heads)
	check("kv_heads", spec.KVHeads != nil, intOf(spec.KVHeads), s.KVHeads)
	check("vocab", spec.Vocab != nil, intOf(spec.Vocab), s.Vocab)
	if spec.TiedEmbeddings != nil {
		check("tied_embeddings", true, *spec.TiedEmbeddings, s.TiedEmbeddings)
	}
	if spec.Activation != nil {
		check("activation", true, *spec.Activation, s.Activation)
	}
	return diags
}
