package engine

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/engine/model"
)

// resolveModel applies a model block's arguments over its preset, or reads
// the Hugging Face folder it names (relative to dir), and checks that the
// shape is a transformer that can exist.
func resolveModel(m *dsl.Model, dir string) (model.Shape, hcl.Diagnostics) {
	if m.Spec.From != nil {
		return resolveFolder(m, dir)
	}
	var s model.Shape
	spec := m.Spec
	if spec.Preset != nil {
		p, err := model.Preset(*spec.Preset)
		if err != nil {
			return s, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unknown model preset",
				Detail: fmt.Sprintf("There is no model preset %q.%s Presets: %s.", *spec.Preset,
					didYouMean(*spec.Preset, model.PresetNames()), joinNames(model.PresetNames())),
				Subject: rangeOr(m.Ranges, "preset", m.DeclRange)}}
		}
		s = p
	} else {
		s.Activation, s.KVHeads = model.ActivationSwiGLU, 0
	}
	var diags hcl.Diagnostics
	setInt := func(dst *int, v *int, name string) {
		if v != nil {
			*dst = *v
		} else if spec.Preset == nil && name != "kv_heads" {
			diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing model argument",
				Detail:  fmt.Sprintf("Model %q has no preset, so it must set %s. Add %s = ... or choose a preset.", m.Name, name, name),
				Subject: m.DeclRange.Ptr()})
		}
	}
	setInt(&s.Layers, spec.Layers, "layers")
	setInt(&s.Hidden, spec.Hidden, "hidden")
	setInt(&s.FFNHidden, spec.FFNHidden, "ffn_hidden")
	setInt(&s.Heads, spec.Heads, "heads")
	setInt(&s.KVHeads, spec.KVHeads, "kv_heads")
	setInt(&s.Vocab, spec.Vocab, "vocab")
	setInt(&s.SeqLen, spec.SeqLen, "seq_len")
	if s.KVHeads == 0 {
		s.KVHeads = s.Heads // no kv_heads means plain multi-head attention
	}
	if spec.TiedEmbeddings != nil {
		s.TiedEmbeddings = *spec.TiedEmbeddings
	}
	if spec.Activation != nil {
		s.Activation = *spec.Activation
	}
	if diags.HasErrors() {
		return s, diags
	}
	return s, checkShape(m, s)
}

func checkShape(m *dsl.Model, s model.Shape) hcl.Diagnostics {
	var diags hcl.Diagnostics
	bad := func(field, detail string) {
		diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid model shape",
			Detail: detail, Subject: rangeOr(m.Ranges, field, m.DeclRange)})
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"layers", s.Layers}, {"hidden", s.Hidden}, {"ffn_hidden", s.FFNHidden}, {"heads", s.Heads}, {"kv_heads", s.KVHeads}, {"vocab", s.Vocab}, {"seq_len", s.SeqLen}} {
		if f.v <= 0 {
			bad(f.name, fmt.Sprintf("%s must be a positive whole number, not %d.", f.name, f.v))
		}
	}
	if diags.HasErrors() {
		return diags
	}
	if s.Hidden%s.Heads != 0 {
		bad("heads", fmt.Sprintf("hidden (%d) must be divisible by heads (%d) so that every head has the same width.", s.Hidden, s.Heads))
	}
	if s.Heads%s.KVHeads != 0 {
		field := "kv_heads"
		if _, set := m.Ranges[field]; !set {
			field = "heads" // kv_heads came from the preset: the heads override broke it
		}
		bad(field, fmt.Sprintf("heads (%d) must be divisible by kv_heads (%d) for grouped-query attention.", s.Heads, s.KVHeads))
	}
	if s.Activation != model.ActivationSwiGLU && s.Activation != model.ActivationGELU {
		bad("activation", fmt.Sprintf("activation must be %q or %q, not %q.", model.ActivationSwiGLU, model.ActivationGELU, s.Activation))
	}
	return diags
}

// modelValue is what a workload sees for model.NAME.
func modelValue(name string, s model.Shape) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"name":            cty.StringVal(name),
		"layers":          cty.NumberIntVal(int64(s.Layers)),
		"hidden":          cty.NumberIntVal(int64(s.Hidden)),
		"ffn_hidden":      cty.NumberIntVal(int64(s.FFNHidden)),
		"heads":           cty.NumberIntVal(int64(s.Heads)),
		"kv_heads":        cty.NumberIntVal(int64(s.KVHeads)),
		"vocab":           cty.NumberIntVal(int64(s.Vocab)),
		"seq_len":         cty.NumberIntVal(int64(s.SeqLen)),
		"tied_embeddings": cty.BoolVal(s.TiedEmbeddings),
		"activation":      cty.StringVal(s.Activation),
		"sliding_window":  cty.NumberIntVal(int64(s.Window)),
		"window_layers":   cty.NumberIntVal(int64(s.WindowLayers)),
		"architecture":    optionalString(s.Architecture),
		"from":            optionalString(s.From),
	})
}

// optionalString is s, or null when empty.
func optionalString(s string) cty.Value {
	if s == "" {
		return cty.NullVal(cty.String)
	}
	return cty.StringVal(s)
}
